import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The cleanups of HTTP/1.1 requests still in progress on each socket. Node 20 emits no 'close'
 * on the responses queued behind the first when a pipelining client drops the connection, so
 * `res 'close'` alone would leak their slots and upstream requests: the socket's own 'close' runs
 * whatever is left here. One listener per socket, entries removed as requests end, so a
 * keep-alive socket gathers nothing.
 */
const pendingOn = new WeakMap<Socket, Set<() => void>>();

function runPending(this: Socket): void {
  const pending = pendingOn.get(this);
  if (!pending) return;
  pendingOn.delete(this);
  for (const cleanup of pending) cleanup();
}

/** The request can no longer be answered: its response closed, or (HTTP/1.1) its connection did. */
export function requestGone(req: IncomingMessage, res: ServerResponse): boolean {
  return res.closed || res.destroyed || req.socket.destroyed;
}

/**
 * Runs `cleanup` exactly once when the request ends however it ends: its response closed
 * (finished, failed, HTTP/2 stream reset) or its HTTP/1.1 connection closed, whichever comes first.
 * Runs it at once when the request is already gone. The caller checks that first when it must not
 * take anything for a gone request.
 */
export function onRequestEnd(req: IncomingMessage, res: ServerResponse, cleanup: () => void): void {
  if (requestGone(req, res)) return cleanup();
  const socket = req.socket;
  const http1 = req.httpVersionMajor === 1;
  let pending: Set<() => void> | undefined;
  let done = false;
  const run = (): void => {
    if (done) return;
    done = true;
    res.off('close', run);
    pending?.delete(run);
    cleanup();
  };
  res.on('close', run);
  if (!http1) return; // an HTTP/2 stream's response closes with its stream, also when the session goes
  pending = pendingOn.get(socket);
  if (!pending) {
    pending = new Set();
    pendingOn.set(socket, pending);
    socket.once('close', runPending);
  }
  pending.add(run);
}
