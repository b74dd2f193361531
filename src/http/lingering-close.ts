import { Socket } from 'node:net';
import type { ServerResponse } from 'node:http';
import { hasBody } from '../proxy/body-limit.js';

/**
 * The bounds of a lingering close: how long the gateway keeps reading a refused body, and how
 * much of it, before it cuts the connection.
 */
export const LINGER = { ms: 2_000, bytes: 8 * 1024 * 1024 } as const;

/**
 * Prepares an answer the gateway gives before the request's body has arrived whole (a 413, 429,
 * 401, 400, ...), unless the answer keeps the connection and the body declared is small. `closing`:
 * the answer already says Connection: close. True when it does: the answer must then carry Connection: close, as the unread
 * rest of the body must not be read as a next request.
 *
 * Closing such a connection at once makes the kernel reset it over the bytes still arriving, and a
 * client still writing its body (Node's http client, a browser) gets EPIPE or ECONNRESET instead of
 * the answer. So, like nginx's lingering close, the connection is half-closed once the answer is
 * written, and what the client still sends is read and dropped, for at most LINGER.ms (past
 * LINGER.bytes it is no longer read), before the connection is closed. HTTP/1 only: an HTTP/2 answer ends its stream alone.
 */
export function closesAfterAnswer(res: ServerResponse, closing: boolean): boolean {
  const req = res.req as ServerResponse['req'] | undefined;
  if (!req || req.complete || req.httpVersionMajor !== 1 || !hasBody(req)) return false;
  // A small declared body on a connection that stays open: Node reads and drops the rest itself
  // before the next request, at no risk, and the client keeps its connection.
  if (!closing && smallBody(req.headers['content-length'])) return false;
  const socket = req.socket;
  // Node ends a connection whose answer said Connection: close with destroySoon once the answer
  // is written: this one lingers instead.
  socket.destroySoon = () => linger(socket);
  return true;
}

/** Bodies up to this size are left to Node to drop on a kept-alive connection. */
const KEEP_ALIVE_BODY = 64 * 1024;

function smallBody(contentLength: string | undefined): boolean {
  return contentLength !== undefined && Number(contentLength) <= KEEP_ALIVE_BODY;
}

/** Half-closes `socket` and drops what it still receives, within LINGER, then closes it. */
function linger(socket: Socket): void {
  // The client is done sending: close as Node would (after the answer is flushed).
  if (socket.readableEnded || socket.destroyed) return Socket.prototype.destroySoon.call(socket);
  socket.end(); // a FIN after the answer: the client reads the answer, then the end
  let left = LINGER.bytes;
  const cut = () => socket.destroy();
  const timer = setTimeout(cut, LINGER.ms);
  socket.once('close', () => clearTimeout(timer));
  // The HTTP parser gets nothing more of this connection, so nothing after the answer is a request.
  socket.removeAllListeners('data');
  socket.on('data', (chunk: Buffer) => {
    left -= chunk.length;
    // Past the bytes bound, stop reading rather than cut: a reset now could reach the client
    // before it has read the answer, and the kernel would drop the answer. TCP's window holds the
    // client's writes until the time bound closes the connection.
    if (left < 0) socket.pause();
  });
  socket.once('end', () => Socket.prototype.destroySoon.call(socket));
  socket.resume();
  readAgain(socket);
}

/**
 * Node's HTTP server reads a connection straight into its parser, and stops reading while a
 * request's body waits unread; a 'data' listener takes the reads back from the parser, but
 * nothing restarts them. Restarted here as Node's server does when it resumes such a socket.
 */
function readAgain(socket: Socket): void {
  const handle = (socket as unknown as { _handle?: { reading?: boolean; readStart?: () => number } })._handle;
  if (handle?.reading === false && typeof handle.readStart === 'function') {
    handle.reading = true;
    handle.readStart();
  }
}
