import type { Clock } from '../../src/clock.js';

interface Timer {
  readonly at: number;
  readonly resolve: () => void;
}

const aborted = (signal: AbortSignal) => signal.reason ?? new DOMException('aborted', 'AbortError');

/**
 * A clock that moves only when the test says so: `advance(ms)` fires the sleeps that are due, in
 * order. `sleeping` lists the pending wake-up times, so a test can wait for a sleep to start.
 */
export class ManualClock implements Clock {
  #now: number;
  readonly #timers = new Set<Timer>();

  constructor(startMs = 1_800_000_000_000) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  get sleeping(): number[] {
    return [...this.#timers].map((t) => t.at).sort((a, b) => a - b);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(aborted(signal));
      const timer: Timer = {
        at: this.#now + ms,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.#timers.delete(timer);
        reject(aborted(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#timers.add(timer);
    });
  }

  /** Moves time on, waking the sleeps that are due on the way (in order). */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    for (;;) {
      const next = [...this.#timers].filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.#now = Math.max(this.#now, next.at);
      this.#timers.delete(next);
      next.resolve();
      await Promise.resolve();
    }
    this.#now = end;
  }
}

/**
 * A clock for the whole world of a test: every sleep jumps time straight to its end, through
 * `jump(ms)` (which moves the gateway's clock and ages the store's windows with it). Sleeps of
 * several callers that end at the same time jump once; jumps are taken one at a time.
 */
export class JumpingClock implements Clock {
  #queue: Promise<void> = Promise.resolve();

  constructor(
    readonly now: () => number,
    private readonly jump: (ms: number) => Promise<void>,
  ) {}

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(aborted(signal));
    const until = this.now() + ms;
    const turn = this.#queue.then(async () => {
      const left = until - this.now();
      if (left > 0) await this.jump(left);
    });
    this.#queue = turn.catch(() => undefined);
    return turn;
  }
}

/** A clock on the wall time whose sleeps never end by themselves: only an abort ends them. */
export class HoldingClock implements Clock {
  readonly sleeps: number[] = [];
  now(): number {
    return Date.now();
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    return new Promise((_resolve, reject) => {
      if (signal?.aborted) return reject(aborted(signal));
      signal?.addEventListener('abort', () => reject(aborted(signal)), { once: true });
    });
  }
}
