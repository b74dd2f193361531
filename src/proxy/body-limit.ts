import type { IncomingMessage } from 'node:http';

/** True when the request carries a body (a non-zero Content-Length, or a Transfer-Encoding). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return length !== undefined ? length !== '0' : req.headers['transfer-encoding'] !== undefined;
}

/** True when the declared Content-Length is over the bound (so the body need not be read at all). */
export function declaresTooLarge(req: IncomingMessage, limit: number): boolean {
  if (limit === 0) return false; // an unbounded route: not even a header read
  const length = req.headers['content-length'];
  return length !== undefined && Number(length) > limit;
}

export type BodyRead =
  | { readonly kind: 'ok'; readonly body: Buffer }
  /** The body passed the bound: reading stopped at the first byte past it. */
  | { readonly kind: 'too_large' }
  /** The whole body did not arrive within the deadline. */
  | { readonly kind: 'timeout' }
  /** The client went away first. */
  | { readonly kind: 'aborted' };

/**
 * Reads a request body whole, up to `limit` bytes and within `timeoutMs`. Memory grows with the
 * bytes that arrive, not with a declared length, so a slow client declaring a large body holds
 * nothing it has not sent. On any outcome but 'ok' the rest of the body is left unread: the caller
 * answers with Connection: close.
 */
export function readBody(req: IncomingMessage, limit: number, timeoutMs: number): Promise<BodyRead> {
  if (req.destroyed || req.readableEnded) return Promise.resolve({ kind: 'aborted' });
  const buffered = bufferedBody(req, limit);
  if (buffered) return Promise.resolve({ kind: 'ok', body: buffered });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (outcome: BodyRead) => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      req.off('error', onClose);
      resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) settle({ kind: 'too_large' });
      else chunks.push(chunk);
    };
    const onEnd = () =>
      settle({ kind: 'ok', body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) });
    // 'close' before 'end' (or 'error'): the connection went away mid-body.
    const onClose = () => settle({ kind: 'aborted' });
    const timer = setTimeout(() => settle({ kind: 'timeout' }), timeoutMs);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onClose);
    req.once('error', onClose);
  });
}

/**
 * The body when all of it has already arrived (the declared Content-Length is buffered, as it is
 * for a small body sent with its headers) and is within the bound: taken from the stream's buffer
 * at once, without listeners or a deadline timer. Undefined otherwise: then it is read as it comes.
 */
export function bufferedBody(req: IncomingMessage, limit: number): Buffer | undefined {
  const length = req.headers['content-length'];
  if (length === undefined || req.readableFlowing || req.readableLength > limit) return undefined;
  if (req.readableLength !== Number(length)) return undefined;
  const body = req.read() as Buffer | null; // a paused byte stream: everything buffered, as one Buffer
  if (body === null) return undefined;
  req.resume(); // so 'end' follows when the parser sees the message end, as with a 'data' listener
  return body;
}
