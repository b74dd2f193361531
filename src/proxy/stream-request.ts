import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';

/**
 * What an HTTP/2 request served on its core stream (runtime/tls/h2-request.ts) adds to what the
 * request path reads of an HTTP/1.1 one. Its HEADERS are handed over before the frames read with
 * them (its DATA, a RST_STREAM right behind it) are processed: those are known one event-loop turn
 * later.
 */
export interface StreamRequestBody {
  /** Undefined once the frames read with the request's HEADERS are processed; else a promise of that. */
  framesRead(): Promise<void> | undefined;
  /** The whole body when the client has ended the stream and it is within `limit`: taken at once. */
  wholeBody(limit: number): Buffer | undefined;
  /** The body as a readable of its own, to forward unread (a bound of 0). */
  bodyStream(): Readable;
}

/** The request's HTTP/2 side, or undefined for an HTTP/1.1 request. */
export function streamRequestOf(req: IncomingMessage): StreamRequestBody | undefined {
  return req.httpVersionMajor === 2 ? (req as unknown as StreamRequestBody) : undefined;
}
