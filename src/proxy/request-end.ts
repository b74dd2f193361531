import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The cleanups of HTTP/1.1 requests queued on each socket behind the one being answered. Node 20
 * emits no 'close' on the responses queued behind the first when a pipelining client drops the
 * connection, so `res 'close'` alone would leak their slots and upstream requests: the socket's
 * own 'close' runs whatever is left here. One listener per socket, entries removed as requests
 * end. A response that has its socket already (every request of a client that does not
 * pipeline) gets its 'close' whatever happens, and takes no entry: no per-request write into the
 * socket's long-lived Set, which the garbage collector would have to track.
 */
const pendingOn = new WeakMap<Socket, Set<() => void>>();

function runPending(this: Socket): void {
  const pending = pendingOn.get(this);
  if (!pending) return;
  pendingOn.delete(this);
  for (const cleanup of pending) cleanup();
}

/** The socket's Set of queued cleanups, run by its 'close'. */
function watchSocket(socket: Socket): Set<() => void> {
  const pending = new Set<() => void>();
  pendingOn.set(socket, pending);
  socket.once('close', runPending);
  return pending;
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
  // An HTTP/2 stream's response closes with its stream, also when the session goes; an HTTP/1.1
  // response given its socket is sent 'close' by Node when the socket closes.
  if (req.httpVersionMajor !== 1 || res.socket !== null) {
    res.on('close', cleanup); // 'on', not 'once': a response emits 'close' once
    return;
  }
  // Queued behind another response on a pipelined connection.
  const socket = req.socket;
  const pending = pendingOn.get(socket) ?? watchSocket(socket);
  let done = false;
  const run = (): void => {
    if (done) return;
    done = true;
    pending.delete(run);
    cleanup();
  };
  res.on('close', run);
  pending.add(run);
}
