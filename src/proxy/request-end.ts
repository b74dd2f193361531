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

/**
 * A request's cleanups held for the one 'close' listener its access log already has on the
 * response (src/http/access-log.ts runs them with runEndHooks): with more than one listener Node
 * keeps an array of them and clones it on every emit, and each extra listener is an addListener.
 */
export interface EndHooks {
  /** Undefined while no listener runs them (before watchEnds, and once run). */
  ends: (() => void)[] | undefined;
}

/** Held by hooks watched but holding nothing yet: no array per request until a cleanup comes. */
const NO_ENDS: (() => void)[] = Object.freeze([]) as unknown as (() => void)[];

/** Marks `hooks` as run by a 'close' listener of the response: the caller adds that listener. */
export function watchEnds(hooks: EndHooks): void {
  hooks.ends = NO_ENDS;
}

/** Runs the cleanups held in `hooks`, once: from the 'close' listener of their response. */
export function runEndHooks(hooks: EndHooks): void {
  const ends = hooks.ends;
  hooks.ends = undefined;
  if (ends === undefined) return;
  // Every one runs, whatever another throws: a slot left held would never come back.
  let failure: unknown;
  for (let i = 0; i < ends.length; i++) {
    try {
      ends[i]!();
    } catch (err) {
      failure ??= err;
    }
  }
  if (failure !== undefined) throw failure;
}

/** The request can no longer be answered: its response closed, or (HTTP/1.1) its connection did. */
export function requestGone(req: IncomingMessage, res: ServerResponse): boolean {
  return res.closed || res.destroyed || req.socket.destroyed;
}

/**
 * Runs `cleanup` exactly once when the request ends however it ends: its response closed
 * (finished, failed, HTTP/2 stream reset) or its HTTP/1.1 connection closed, whichever comes first.
 * Runs it at once when the request is already gone. The caller checks that first when it must not
 * take anything for a gone request. With `hooks` watched (a 'close' listener of `res` calls their
 * runEndHooks), `cleanup` is held there rather than given a listener of its own.
 */
export function onRequestEnd(
  req: IncomingMessage,
  res: ServerResponse,
  cleanup: () => void,
  hooks?: EndHooks,
): void {
  if (requestGone(req, res)) return cleanup();
  // An HTTP/2 stream's response closes with its stream, also when the session goes; an HTTP/1.1
  // response given its socket is sent 'close' by Node when the socket closes.
  if (req.httpVersionMajor !== 1 || res.socket !== null) {
    const held = hooks?.ends;
    if (held === undefined)
      res.on('close', cleanup); // 'on', not 'once': a response emits 'close' once
    else if (held === NO_ENDS) hooks!.ends = [cleanup];
    else held.push(cleanup);
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
