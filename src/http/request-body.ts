import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { bufferedBody, hasBody, readBody } from '../proxy/body-limit.js';
import { streamRequestOf } from '../proxy/stream-request.js';
import { sendError } from './responses.js';

/** The body forwarded unread (a bound of 0): the request itself, or an HTTP/2 stream's body. */
const unread = (req: IncomingMessage): Readable => streamRequestOf(req)?.bodyStream() ?? req;

/**
 * The body to forward when it needs no waiting, as requestBody would return it: null (none), the
 * body unread (a bound of 0), or a small body that arrived whole with the headers. Undefined
 * when it must be read as it comes: then call requestBody. Synchronous, so the common request
 * awaits nothing for its body.
 */
export function bodyAtHand(req: IncomingMessage, maxBodySize: number): Buffer | Readable | null | undefined {
  if (!hasBody(req)) return null;
  if (maxBodySize === 0) return unread(req);
  if (req.destroyed || req.readableEnded) return undefined; // requestBody answers it (aborted)
  const h2 = streamRequestOf(req);
  if (h2) return h2.framesRead() ? undefined : h2.wholeBody(maxBodySize);
  return bufferedBody(req, maxBodySize);
}

/**
 * An HTTP/2 body that came with its HEADERS: taken whole once the frames read with them are
 * processed (one event-loop turn, shared by the streams of that read), with no listener or timer.
 */
async function framedBody(req: IncomingMessage, maxBodySize: number): Promise<Buffer | undefined> {
  const h2 = streamRequestOf(req);
  if (!h2) return undefined;
  await h2.framesRead();
  if (req.destroyed) return undefined;
  return h2.wholeBody(maxBodySize);
}

/**
 * The body to forward, read whole before any upstream connection is taken, so a slow client
 * holds only its own socket and slots, never a connection other clients need:
 * - null: the request has none (GET and the like: nothing allocated);
 * - a Buffer: the whole body, within the bound and the deadline;
 * - the body unread, when the route's bound is 0 (streamed to the upstream);
 * - undefined: the gateway answered already (413, 408) or the client left.
 */
export async function requestBody(
  req: IncomingMessage,
  res: ServerResponse,
  maxBodySize: number,
  timeoutMs: number,
  rateHeaders: Record<string, string>,
): Promise<Buffer | Readable | null | undefined> {
  if (!hasBody(req)) return null;
  if (maxBodySize === 0) return unread(req);
  const framed = await framedBody(req, maxBodySize);
  if (framed) return framed;
  const read = await readBody(req, maxBodySize, timeoutMs);
  switch (read.kind) {
    case 'ok':
      return read.body;
    case 'too_large':
      sendTooLarge(res, maxBodySize, rateHeaders);
      return undefined;
    case 'timeout':
      sendError(
        res,
        408,
        'request_timeout',
        `The request body did not arrive within ${timeoutMs / 1000} s.`,
        { ...rateHeaders, connection: 'close' },
      );
      return undefined;
    case 'aborted':
      return undefined;
  }
}

/** 413, and the connection closed: the unread rest of the body must not be taken for the next request. */
/** The 413's message (also shown by `tollgate explain`). */
export const tooLargeMessage = (maxBodySize: number): string =>
  `The request body exceeds ${maxBodySize} bytes.`;

export function sendTooLarge(
  res: ServerResponse,
  maxBodySize: number,
  rateHeaders: Record<string, string>,
): void {
  sendError(res, 413, 'payload_too_large', tooLargeMessage(maxBodySize), {
    ...rateHeaders,
    connection: 'close',
  });
}
