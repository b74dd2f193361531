import type { BatchedRequest } from './batch-window-script.js';
import {
  StoreUnavailableError,
  WrappingStore,
  type StoreLifecycle,
  type StoreObserver,
  type WindowRequest,
  type WindowResult,
} from './window-store.js';

/** Hands one request of a batch its outcome: its results, or the error that failed it. */
export type SettleRequest = (request: number, outcome: WindowResult[] | Error) => void;

/** A store that decides many requests together, in order, each all-or-nothing. */
export interface BatchWindowStore extends StoreLifecycle {
  /**
   * Decides the batch and calls `settle` once for every request (by its index in the batch), in
   * any order, later. The store need not split the batch further. One callback for the batch
   * rather than a promise per request: a request's answer costs no promise or closure of its own.
   */
  hitBatch(batch: readonly BatchedRequest[], settle: SettleRequest): void;
}

export interface BatchingStoreOptions {
  /** No request waits longer than this from its own hit() call. */
  readonly timeoutMs: number;
  /** Requests per script call; a larger batch is split (in order). */
  readonly maxRequests?: number;
  /** Windows (keys) per script call; a single request with more still goes alone. */
  readonly maxWindows?: number;
  /** Told of every request settled: its round trip, and whether it failed. */
  readonly observer?: StoreObserver;
}

interface Pending {
  readonly windows: readonly WindowRequest[];
  readonly resolve: (results: WindowResult[]) => void;
  readonly reject: (err: Error) => void;
  /** performance.now() at hit(), for the observer's round trip. */
  readonly started: number;
  settled: boolean;
}

interface Batch {
  readonly entries: Pending[];
  timer?: NodeJS.Timeout;
  unsettled: number;
}

/**
 * Coalesces the hits of one event-loop turn into one batch call of the inner store. The batch is
 * sent from setImmediate: that runs once the poll phase has handed over every socket that was
 * ready, so all requests parsed in this turn are in it, and it waits for no timer and no I/O. (A
 * microtask or nextTick would run after each socket's callback, batching one request at a time.)
 * One deadline timer per batch, started with its first request: since every later request of the
 * batch arrived after that, none waits longer than `timeoutMs` from its own hit().
 */
export class BatchingStore extends WrappingStore<BatchWindowStore> {
  readonly #timeoutMs: number;
  readonly #maxRequests: number;
  readonly #maxWindows: number;
  readonly #observer: StoreObserver | undefined;
  #open: Batch | undefined;

  constructor(inner: BatchWindowStore, options: BatchingStoreOptions) {
    super(inner);
    this.#timeoutMs = options.timeoutMs;
    this.#maxRequests = options.maxRequests ?? 256;
    this.#maxWindows = options.maxWindows ?? 1024;
    this.#observer = options.observer;
  }

  hit(windows: readonly WindowRequest[]): Promise<WindowResult[]> {
    if (windows.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      let batch = this.#open;
      if (!batch) {
        const opened: Batch = { entries: [], unsettled: 0 };
        opened.timer = setTimeout(() => this.#expire(opened), this.#timeoutMs);
        setImmediate(() => this.#flush(opened));
        this.#open = batch = opened;
      }
      const started = this.#observer ? performance.now() : 0;
      batch.entries.push({ windows, resolve, reject, started, settled: false });
      batch.unsettled++;
    });
  }

  #flush(batch: Batch): void {
    if (this.#open === batch) this.#open = undefined;
    // In order, cut where a chunk would exceed the request or window bound. Requests the deadline
    // already failed are not sent: they must not be counted.
    let chunk: Pending[] = [];
    let windows = 0;
    for (const p of batch.entries) {
      if (p.settled) continue;
      const full = chunk.length >= this.#maxRequests || windows + p.windows.length > this.#maxWindows;
      if (chunk.length > 0 && full) {
        this.#send(batch, chunk);
        chunk = [];
        windows = 0;
      }
      chunk.push(p);
      windows += p.windows.length;
    }
    if (chunk.length > 0) this.#send(batch, chunk);
  }

  #send(batch: Batch, chunk: readonly Pending[]): void {
    const windows = new Array<readonly WindowRequest[]>(chunk.length);
    for (let i = 0; i < chunk.length; i++) windows[i] = chunk[i]!.windows;
    try {
      this.inner.hitBatch(windows, (i, outcome) =>
        this.#settle(batch, chunk[i]!, outcome instanceof Error ? unavailable(outcome) : outcome),
      );
    } catch (err) {
      for (const p of chunk) this.#settle(batch, p, unavailable(err));
    }
  }

  #expire(batch: Batch): void {
    if (this.#open === batch) this.#open = undefined;
    const err = new StoreUnavailableError(`no reply within ${this.#timeoutMs}ms`);
    for (const p of batch.entries) this.#settle(batch, p, err);
  }

  #settle(batch: Batch, p: Pending, outcome: WindowResult[] | Error): void {
    if (p.settled) return;
    p.settled = true;
    const observer = this.#observer;
    if (observer) {
      if (outcome instanceof Error) observer.storeError();
      observer.storeRoundTrip((performance.now() - p.started) / 1000);
    }
    if (outcome instanceof Error) p.reject(outcome);
    else p.resolve(outcome);
    if (--batch.unsettled === 0) clearTimeout(batch.timer);
  }
}

const unavailable = (err: unknown): Error =>
  err instanceof StoreUnavailableError
    ? err
    : new StoreUnavailableError(`store: ${(err as Error).message}`, { cause: err });
