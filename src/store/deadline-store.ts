import {
  StoreUnavailableError,
  type WindowRequest,
  type WindowResult,
  type WindowStore,
} from './window-store.js';

/**
 * Bounds every hit at `timeoutMs` from the moment it is asked for. ioredis starts a command's own
 * timer only when the command is written, and an auto-pipelined command first waits for the
 * pipeline in flight: against a stalled Redis that doubled the wait. This timer starts at the call.
 */
export class DeadlineStore implements WindowStore {
  constructor(
    private readonly inner: WindowStore,
    private readonly timeoutMs: number,
  ) {}

  hit(requests: readonly WindowRequest[]): Promise<WindowResult[]> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new StoreUnavailableError(`no reply within ${this.timeoutMs}ms`)),
        this.timeoutMs,
      );
      this.inner.hit(requests).then(
        (results) => {
          clearTimeout(timer);
          resolve(results);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err as Error);
        },
      );
    });
  }

  connect(): Promise<boolean> {
    return this.inner.connect();
  }

  ready(): Promise<boolean> {
    return this.inner.ready();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
