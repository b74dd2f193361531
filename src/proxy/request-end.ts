import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The cleanups of one request, run once when it ends. One per request however many parts register
 * (admission's slot, the relay's upstream abort): one 'close' listener on the response and one
 * entry on the socket, not one of each per cleanup.
 */
class Ending {
  readonly cleanups: (() => void)[];
  done = false;
  /** The socket's entry (HTTP/1.1), taken out when the response closes first. */
  pending: Set<Ending> | undefined;

  constructor(first: () => void) {
    this.cleanups = [first];
  }

  // A property, not a method: the response's 'close' listener, made once per request.
  readonly run = (): void => {
    if (this.done) return;
    this.done = true;
    this.pending?.delete(this);
    // No res.off: a response emits 'close' once, and `done` guards the socket's call.
    for (const cleanup of this.cleanups) cleanup();
  };
}

/** Each response's Ending, while its request is in progress. */
const endings = new WeakMap<ServerResponse, Ending>();

/**
 * The Endings of HTTP/1.1 requests still in progress on each socket. Node 20 emits no 'close'
 * on the responses queued behind the first when a pipelining client drops the connection, so
 * `res 'close'` alone would leak their slots and upstream requests: the socket's own 'close' runs
 * whatever is left here. One listener per socket, entries removed as requests end, so a
 * keep-alive socket gathers nothing.
 */
const pendingOn = new WeakMap<Socket, Set<Ending>>();

function runPending(this: Socket): void {
  const pending = pendingOn.get(this);
  if (!pending) return;
  pendingOn.delete(this);
  for (const ending of pending) ending.run();
}

/** The request can no longer be answered: its response closed, or (HTTP/1.1) its connection did. */
export function requestGone(req: IncomingMessage, res: ServerResponse): boolean {
  return res.closed || res.destroyed || req.socket.destroyed;
}

/**
 * Runs `cleanup` exactly once when the request ends however it ends: its response closed
 * (finished, failed, HTTP/2 stream reset) or its HTTP/1.1 connection closed, whichever comes first.
 * Runs it at once when the request is already gone. The caller checks that first when it must not
 * take anything for a gone request. A request's cleanups run in the order they were registered.
 */
export function onRequestEnd(req: IncomingMessage, res: ServerResponse, cleanup: () => void): void {
  if (requestGone(req, res)) return cleanup();
  const known = endings.get(res);
  if (known !== undefined && !known.done) {
    known.cleanups.push(cleanup);
    return;
  }
  const ending = new Ending(cleanup);
  endings.set(res, ending);
  res.on('close', ending.run);
  if (req.httpVersionMajor !== 1) return; // an HTTP/2 stream's response closes with its stream, also when the session goes
  const socket = req.socket;
  let pending = pendingOn.get(socket);
  if (!pending) {
    pending = new Set();
    pendingOn.set(socket, pending);
    socket.once('close', runPending);
  }
  pending.add(ending);
  ending.pending = pending;
}
