import type { BatchedRequest } from './batch-window-script.js';
import {
  StoreUnavailableError,
  WrappingStore,
  type StoreLifecycle,
  type WindowRequest,
  type WindowResult,
} from './window-store.js';

/** A store that decides many requests together, in order, each all-or-nothing. */
export interface BatchWindowStore extends StoreLifecycle {
  /** One promise per request, in the batch's order. The store need not split the batch further. */
  hitBatch(batch: readonly BatchedRequest[]): Promise<WindowResult[]>[];
}

export interface BatchingStoreOptions {
  /** No request waits longer than this from its own hit() call. */
  readonly timeoutMs: number;
  /** Requests per script call; a larger batch is split (in order). */
  readonly maxRequests?: number;
  /** Windows (keys) per script call; a single request with more still goes alone. */
  readonly maxWindows?: number;
}

interface Pending {
  readonly windows: readonly WindowRequest[];
  readonly resolve: (results: WindowResult[]) => void;
  readonly reject: (err: Error) => void;
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
  #open: Batch | undefined;

  constructor(inner: BatchWindowStore, options: BatchingStoreOptions) {
    super(inner);
    this.#timeoutMs = options.timeoutMs;
    this.#maxRequests = options.maxRequests ?? 256;
    this.#maxWindows = options.maxWindows ?? 1024;
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
      batch.entries.push({ windows, resolve, reject, settled: false });
      batch.unsettled++;
    });
  }

  #flush(batch: Batch): void {
    if (this.#open === batch) this.#open = undefined;
    // Requests the deadline already failed are not sent: they must not be counted.
    for (const chunk of this.#chunks(batch.entries.filter((p) => !p.settled))) {
      let replies: Promise<WindowResult[]>[];
      try {
        replies = this.inner.hitBatch(chunk.map((p) => p.windows));
      } catch (err) {
        for (const p of chunk) this.#settle(batch, p, unavailable(err));
        continue;
      }
      chunk.forEach((p, i) =>
        replies[i]!.then(
          (results) => this.#settle(batch, p, results),
          (err: unknown) => this.#settle(batch, p, unavailable(err)),
        ),
      );
    }
  }

  /** The batch in order, cut where a chunk would exceed the request or window bound. */
  *#chunks(entries: readonly Pending[]): Generator<Pending[]> {
    let chunk: Pending[] = [];
    let windows = 0;
    for (const p of entries) {
      const full = chunk.length >= this.#maxRequests || windows + p.windows.length > this.#maxWindows;
      if (chunk.length > 0 && full) {
        yield chunk;
        chunk = [];
        windows = 0;
      }
      chunk.push(p);
      windows += p.windows.length;
    }
    if (chunk.length > 0) yield chunk;
  }

  #expire(batch: Batch): void {
    if (this.#open === batch) this.#open = undefined;
    const err = new StoreUnavailableError(`no reply within ${this.#timeoutMs}ms`);
    for (const p of batch.entries) this.#settle(batch, p, err);
  }

  #settle(batch: Batch, p: Pending, outcome: WindowResult[] | Error): void {
    if (p.settled) return;
    p.settled = true;
    if (outcome instanceof Error) p.reject(outcome);
    else p.resolve(outcome);
    if (--batch.unsettled === 0) clearTimeout(batch.timer);
  }
}

const unavailable = (err: unknown): Error =>
  err instanceof StoreUnavailableError
    ? err
    : new StoreUnavailableError(`store: ${(err as Error).message}`, { cause: err });
