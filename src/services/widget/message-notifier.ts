import { EventEmitter } from 'node:events';

/** Where the streams report a failure (fastify's and pino's loggers fit). */
export interface StreamLog {
  error(details: object, message: string): void;
}

export const consoleLog: StreamLog = { error: (details, message) => console.error(message, details) };

/** Tells this process's open streams that a session's conversation changed. */
export class MessageNotifier {
  readonly #emitter = new EventEmitter().setMaxListeners(0);

  constructor(private readonly log: StreamLog = consoleLog) {}

  /** Never throws: the change it announces is already stored, whatever a listener does with it. */
  notify(sessionId: string): void {
    this.#emitter.emit(sessionId);
  }

  /** Calls `listener` on each notification for the session; returns the unsubscribe function. */
  subscribe(sessionId: string, listener: () => void): () => void {
    const guarded = (): void => {
      try {
        listener();
      } catch (err) {
        this.log.error({ err, sessionId }, 'a widget message listener failed');
      }
    };
    this.#emitter.on(sessionId, guarded);
    return () => this.#emitter.off(sessionId, guarded);
  }

  /** How many streams of this process follow the session. */
  subscribers(sessionId: string): number {
    return this.#emitter.listenerCount(sessionId);
  }
}
