import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { MessageRow } from './tables/messages.js';
import { consoleLog, type MessageNotifier, type StreamLog } from './message-notifier.js';
import type { MessageSource } from './message-source.js';

export interface StreamTiming {
  /** How often the table is read, for messages another process stored (one read for all open streams). */
  readonly pollMs: number;
  /** How often a comment keeps the connections (and the gateway's body timeout) alive. */
  readonly pingMs: number;
}

export const STREAM_TIMING: StreamTiming = { pollMs: 1_000, pingMs: 15_000 };

/** One Server-Sent Event for a stored message; its id is the cursor a reconnecting client sends back. */
export function messageEvent(message: MessageRow): string {
  return `id: ${message.id}\nevent: message\ndata: ${JSON.stringify(message)}\n\n`;
}

const BATCH = 100;

/** One open stream: its session, the last message id it wrote, and whether its client keeps up. */
interface Stream {
  readonly sessionId: string;
  readonly res: ServerResponse;
  cursor: number;
  /** Waiting for 'drain': the client reads slower than messages arrive; it catches up from `cursor` then. */
  blocked: boolean;
  closed: boolean;
  finish(): void;
}

export interface StreamOptions {
  readonly timing?: StreamTiming;
  readonly log?: StreamLog;
}

/**
 * The open streams of one service. A stream first writes what its session stored after its
 * cursor; from then on one shared poller feeds them all: each tick is one read of the messages
 * stored after the last one seen, whatever the session (so another process's are found too),
 * which also names the followed sessions that were erased. It runs while a stream is open, and
 * the notifier (this process's writes) wakes it at once. A failure ends the streams it touches,
 * logged, and never escapes into the timer, the socket or the request that notified.
 */
export class MessageStreams {
  readonly #sessions = new Map<string, Set<Stream>>();
  readonly #timing: StreamTiming;
  readonly #log: StreamLog;
  /** The last row id the poller has seen. */
  #cursor = 0;
  #timer: NodeJS.Timeout | undefined;
  #woken = false;
  #pingedAt = 0;

  constructor(
    private readonly source: MessageSource,
    private readonly notifier: MessageNotifier,
    options: StreamOptions = {},
  ) {
    this.#timing = options.timing ?? STREAM_TIMING;
    this.#log = options.log ?? consoleLog;
  }

  /** Takes over the reply and streams until the client leaves, the session is erased or the service closes. */
  open(reply: FastifyReply, sessionId: string, after: number): void {
    // Before the reply is taken over, so that a failing database is still an error response.
    if (this.#timer === undefined) this.#cursor = this.source.maxRowId();

    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no', // and no proxy in front should buffer it either
    });
    res.write('retry: 2000\n\n');

    let unsubscribe = (): void => {};
    const cleanup = (): void => {
      if (stream.closed) return;
      stream.closed = true;
      unsubscribe();
      this.#remove(stream);
    };
    const stream: Stream = {
      sessionId,
      res,
      cursor: after,
      blocked: false,
      closed: false,
      finish: () => {
        cleanup();
        res.end();
      },
    };
    res.once('close', cleanup);
    res.once('error', cleanup);
    unsubscribe = this.notifier.subscribe(sessionId, this.#wake);
    this.#add(stream);
    this.#guard(stream, () => this.#catchUp(stream));
  }

  /** Ends every open stream (before the service closes: an open stream would hold it up). */
  endAll(): void {
    for (const streams of [...this.#sessions.values()]) for (const stream of [...streams]) stream.finish();
  }

  /** How many streams are open, and whether the shared poller runs (it does exactly while one is). */
  get status(): { streams: number; polling: boolean } {
    let streams = 0;
    for (const set of this.#sessions.values()) streams += set.size;
    return { streams, polling: this.#timer !== undefined };
  }

  #add(stream: Stream): void {
    let streams = this.#sessions.get(stream.sessionId);
    if (!streams) this.#sessions.set(stream.sessionId, (streams = new Set()));
    streams.add(stream);
    if (this.#timer === undefined) {
      this.#pingedAt = Date.now();
      this.#timer = setInterval(this.#tick, this.#timing.pollMs);
    }
  }

  #remove(stream: Stream): void {
    const streams = this.#sessions.get(stream.sessionId);
    streams?.delete(stream);
    if (streams?.size === 0) this.#sessions.delete(stream.sessionId);
    if (this.#sessions.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  /** A notification: poll at once, after the notifying request's own work (and never inside it). */
  readonly #wake = (): void => {
    if (this.#woken) return;
    this.#woken = true;
    setImmediate(this.#tick);
  };

  /** One poll for every open stream: new messages to their streams, erased sessions' streams ended. */
  readonly #tick = (): void => {
    this.#woken = false;
    try {
      for (;;) {
        if (this.#sessions.size === 0) return;
        const { messages, gone } = this.source.pollStreams(this.#cursor, [...this.#sessions.keys()], BATCH);
        for (const sessionId of gone) {
          for (const stream of [...(this.#sessions.get(sessionId) ?? [])]) stream.finish();
        }
        for (const { session_id, row_id, ...message } of messages) {
          this.#cursor = row_id;
          for (const stream of [...(this.#sessions.get(session_id) ?? [])]) {
            this.#guard(stream, () => this.#deliver(stream, message));
          }
        }
        if (messages.length < BATCH) break;
      }
    } catch (err) {
      // Every stream depends on this read: end them all; their clients reconnect from their last event id.
      this.#log.error({ err }, 'the widget message streams failed to poll; ending them');
      this.endAll();
      return;
    }
    this.#ping();
  };

  #ping(): void {
    const now = Date.now();
    if (now - this.#pingedAt < this.#timing.pingMs) return;
    this.#pingedAt = now;
    for (const streams of [...this.#sessions.values()]) {
      for (const stream of [...streams]) {
        if (!stream.blocked) this.#guard(stream, () => stream.res.write(': ping\n\n'));
      }
    }
  }

  /** A message the poller found, unless the stream already wrote it or is catching up by itself. */
  #deliver(stream: Stream, message: MessageRow): void {
    if (stream.closed || stream.blocked || message.id <= stream.cursor) return;
    this.#write(stream, message);
  }

  /** Writes what the session stored after the stream's cursor, until the client stops keeping up. */
  #catchUp(stream: Stream): void {
    for (;;) {
      if (stream.closed || stream.blocked) return;
      const rows = this.source.messagesAfter(stream.sessionId, stream.cursor, BATCH);
      for (const row of rows) if (!this.#write(stream, row)) return;
      if (rows.length < BATCH) return;
    }
  }

  /** False when the client's buffer is full: the stream then catches up by itself on 'drain'. */
  #write(stream: Stream, message: MessageRow): boolean {
    stream.cursor = message.id;
    if (stream.res.write(messageEvent(message))) return true;
    stream.blocked = true;
    stream.res.once('drain', () => {
      stream.blocked = false;
      this.#guard(stream, () => this.#catchUp(stream));
    });
    return false;
  }

  /** Runs a step of one stream; a failure (the database, say) is logged and ends that stream only. */
  #guard(stream: Stream, step: () => unknown): void {
    try {
      step();
    } catch (err) {
      this.#log.error({ err, sessionId: stream.sessionId }, 'a widget message stream failed; ending it');
      try {
        stream.finish();
      } catch {
        // The socket is gone already.
      }
    }
  }
}
