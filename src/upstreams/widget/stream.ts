import { EventEmitter } from 'node:events';
import type { FastifyReply } from 'fastify';
import type { MessageRow, WidgetStore } from './store.js';

/** Tells this process's open streams that a session's conversation changed. */
export class MessageNotifier {
  readonly #emitter = new EventEmitter().setMaxListeners(0);

  notify(sessionId: string): void {
    this.#emitter.emit(sessionId);
  }

  /** Calls `listener` on each notification for the session; returns the unsubscribe function. */
  subscribe(sessionId: string, listener: () => void): () => void {
    this.#emitter.on(sessionId, listener);
    return () => this.#emitter.off(sessionId, listener);
  }

  /** How many streams of this process follow the session. */
  subscribers(sessionId: string): number {
    return this.#emitter.listenerCount(sessionId);
  }
}

export interface StreamTiming {
  /** How often the table is read, for messages another process stored. */
  readonly pollMs: number;
  /** How often a comment keeps the connection (and the gateway's body timeout) alive. */
  readonly pingMs: number;
}

export const STREAM_TIMING: StreamTiming = { pollMs: 1_000, pingMs: 15_000 };

/** One Server-Sent Event for a stored message; its id is the cursor a reconnecting client sends back. */
export function messageEvent(message: MessageRow): string {
  return `id: ${message.id}\nevent: message\ndata: ${JSON.stringify(message)}\n\n`;
}

const BATCH = 100;

/**
 * The open streams of one service: each delivers its session's messages stored after its cursor,
 * woken by the notifier (this process) and by a short poll (other processes on the same database).
 */
export class MessageStreams {
  readonly #open = new Set<() => void>();

  constructor(
    private readonly store: WidgetStore,
    private readonly notifier: MessageNotifier,
    private readonly timing: StreamTiming = STREAM_TIMING,
  ) {}

  /** Takes over the reply and streams until the client leaves, the session is erased or the service closes. */
  open(reply: FastifyReply, sessionId: string, after: number): void {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no', // and no proxy in front should buffer it either
    });
    res.write('retry: 2000\n\n');

    let cursor = after;
    let closed = false;
    let blocked = false; // waiting for 'drain': the client reads slower than messages arrive
    const drain = (): void => {
      if (closed || blocked) return;
      if (!this.store.sessionExists(sessionId)) return finish();
      for (;;) {
        const rows = this.store.messagesAfter(sessionId, cursor, BATCH);
        for (const row of rows) {
          cursor = row.id;
          if (!res.write(messageEvent(row))) {
            blocked = true;
            res.once('drain', () => {
              blocked = false;
              drain();
            });
            return;
          }
        }
        if (rows.length < BATCH) return;
      }
    };
    const poll = setInterval(drain, this.timing.pollMs);
    const ping = setInterval(() => res.write(': ping\n\n'), this.timing.pingMs);
    const unsubscribe = this.notifier.subscribe(sessionId, drain);
    const cleanup = (): void => {
      if (closed) return;
      closed = true;
      clearInterval(poll);
      clearInterval(ping);
      unsubscribe();
      this.#open.delete(finish);
    };
    function finish(): void {
      cleanup();
      res.end();
    }
    res.once('close', cleanup);
    res.once('error', cleanup);
    this.#open.add(finish);
    drain();
  }

  /** Ends every open stream (before the service closes: an open stream would hold it up). */
  endAll(): void {
    for (const end of [...this.#open]) end();
  }
}
