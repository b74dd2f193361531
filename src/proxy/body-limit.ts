import type { IncomingMessage } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';

export class BodyTooLargeError extends Error {
  readonly code = 'TOLLGATE_BODY_TOO_LARGE';
  constructor(readonly limit: number) {
    super(`request body exceeds ${limit} bytes`);
  }
}

/** True when the declared Content-Length is over the bound (so the body need not be read at all). */
export function declaresTooLarge(req: IncomingMessage, limit: number): boolean {
  if (limit === 0) return false; // most routes: not even a header read
  const length = req.headers['content-length'];
  return length !== undefined && Number(length) > limit;
}

/** Passes a body of unknown length through, failing with BodyTooLargeError at the first byte past `limit`. */
export function limitBody(body: IncomingMessage, limit: number): Transform {
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      seen += chunk.length;
      if (seen > limit) callback(new BodyTooLargeError(limit));
      else callback(null, chunk);
    },
  });
  body.on('error', (err) => counter.destroy(err));
  return body.pipe(counter);
}
