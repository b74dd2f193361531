import type { BatchedRequest } from './batch-window-script.js';
import { atTurnEnd } from './turn-end.js';
import {
  StoreUnavailableError,
  WrappingStore,
  type ResultTap,
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
  /** How long the store has to answer a batch, from the moment the batch is written to it. */
  readonly timeoutMs: number;
  /** Requests per script call; a larger batch is split (in order). */
  readonly maxRequests?: number;
  /** Windows (keys) per script call; a single request with more still goes alone. */
  readonly maxWindows?: number;
  /** Milliseconds a batch waits for more requests before it is sent; 0: the end of its turn. */
  readonly windowMs?: number;
  /**
   * Batches written and unanswered at most; a batch due while that many are out waits, open to
   * more requests, until one is answered or failed. 0: no bound (each turn's batch goes at once).
   */
  readonly maxInFlight?: number;
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
  /** The batch window's timer, while the batch waits for more requests. */
  hold?: NodeJS.Timeout;
  /** performance.now() by which the store must have answered: set when the batch is written. */
  deadline: number;
  unsettled: number;
  /** Written to the inner store (a batch due may wait for one in flight: maxInFlight). */
  written: boolean;
}

/**
 * Coalesces the hits of one event-loop turn (or of a batch window: `windowMs` from the batch's
 * first hit; a batch that fills a script call goes at once) into one batch call of the inner store.
 * The batch is sent at the end of the turn (turn-end.ts: a setImmediate, after the turn's
 * post-charges): that runs once the poll phase has handed over every socket that was ready, so all
 * requests parsed in this turn are in it, and it waits for no timer and no I/O. (A microtask or
 * nextTick would run after each socket's callback, batching one request at a time.)
 *
 * The deadline measures the store, not the event loop. It starts when the batch is written, and
 * when its timer fires the verdict waits for setImmediate: the poll phase before it reads whatever
 * the store's socket already holds. So a timer that fires late because the loop was busy (while
 * the reply sat unread in the socket) does not fail the batch, and an unanswering store still
 * fails it at the deadline, the check phase adding no wait of its own. Every batch has the same
 * timeout, so the batches in flight reach their deadlines in the order they were written: one
 * timer, for the oldest, serves them all (set about once per timeout under load, where a timer
 * per batch was set and cleared per call), and a batch leaves the queue once answered.
 *
 * With `maxInFlight`, a batch due while that many are unanswered stays open and goes at the end of
 * the turn that answers (or fails) one: under load the turns of a round trip share one call (a
 * Redis call costs about as much for 16 requests of one key as for 8), and an idle store adds no
 * wait. Batches still go in order. A written batch has the whole timeout (a slow but healthy Redis
 * answers each call within it); the batches waiting behind one that fails its deadline fail with
 * it, so a stalled Redis holds no request longer than the timeout.
 */
export class BatchingStore extends WrappingStore<BatchWindowStore> implements ResultTap {
  readonly #timeoutMs: number;
  readonly #maxRequests: number;
  readonly #maxWindows: number;
  readonly #windowMs: number;
  readonly #observer: StoreObserver | undefined;
  readonly #maxInFlight: number;
  #open: Batch | undefined;
  /** Batches due, in order, waiting for a batch in flight to be answered (the open one may be last). */
  readonly #waiting: Batch[] = [];
  #releasing = false;
  /** Batches written with requests still unsettled. */
  #unanswered = 0;
  /** Batches written and not yet answered or failed, oldest (earliest deadline) first. */
  readonly #inFlight: Batch[] = [];
  /** The deadline timer, for the oldest batch in flight (it may have been answered since). */
  #deadlineTimer: NodeJS.Timeout | undefined;
  #tap: ((requests: readonly WindowRequest[], results: WindowResult[]) => void) | undefined;

  constructor(inner: BatchWindowStore, options: BatchingStoreOptions) {
    super(inner);
    this.#timeoutMs = options.timeoutMs;
    this.#maxRequests = options.maxRequests ?? 256;
    this.#maxWindows = options.maxWindows ?? 1024;
    this.#windowMs = options.windowMs ?? 0;
    this.#observer = options.observer;
    this.#maxInFlight = options.maxInFlight ?? 0;
  }

  tapResults(tap: (requests: readonly WindowRequest[], results: WindowResult[]) => void): void {
    this.#tap = tap;
  }

  hit(windows: readonly WindowRequest[]): Promise<WindowResult[]> {
    if (windows.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      let batch = this.#open;
      if (!batch) {
        const opened: Batch = { entries: [], unsettled: 0, deadline: 0, written: false };
        if (this.#windowMs > 0) opened.hold = setTimeout(() => this.#sendAtTurnEnd(opened), this.#windowMs);
        else this.#sendAtTurnEnd(opened);
        this.#open = batch = opened;
      }
      const started = this.#observer ? performance.now() : 0;
      batch.entries.push({ windows, resolve, reject, started, settled: false });
      batch.unsettled++;
      // A held batch that fills one script call waits no longer.
      if (batch.hold && batch.entries.length >= this.#maxRequests) {
        clearTimeout(batch.hold);
        batch.hold = undefined;
        this.#open = undefined;
        this.#sendAtTurnEnd(batch);
      }
    });
  }

  /** At the end of this turn, after the turn's post-charges have joined the batch. */
  #sendAtTurnEnd(batch: Batch): void {
    atTurnEnd('send', () => this.#flush(batch));
  }

  #flush(batch: Batch): void {
    batch.hold = undefined;
    const max = this.#maxInFlight;
    // Waits, still open if it is (requests join it), till a batch in flight is answered.
    if (max > 0 && (this.#unanswered >= max || this.#waiting.length > 0)) this.#waiting.push(batch);
    else this.#write(batch);
  }

  /** At the end of the turn a batch in flight was answered in: the waiting batches that may go. */
  readonly #release = (): void => {
    this.#releasing = false;
    while (this.#waiting.length > 0 && this.#unanswered < this.#maxInFlight)
      this.#write(this.#waiting.shift()!);
  };

  #write(batch: Batch): void {
    if (this.#open === batch) this.#open = undefined;
    batch.written = true;
    // The store's whole timeout from now: a wait behind the call ahead ends when that call is
    // answered, or fails with it at its deadline (#expire).
    batch.deadline = performance.now() + this.#timeoutMs;
    this.#inFlight.push(batch);
    // Unref'd: a batch in flight keeps the process up by its socket, not by its deadline.
    if (this.#deadlineTimer === undefined)
      this.#deadlineTimer = setTimeout(this.#judge, this.#timeoutMs).unref();
    this.#unanswered++;
    // In order, cut where a chunk would exceed the request or window bound.
    let chunk: Pending[] = [];
    let windows = 0;
    for (const p of batch.entries) {
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

  /**
   * The deadline timer fired: the batches past their deadline fail once the pending replies are
   * read; the timer is set again for the oldest batch left.
   */
  readonly #judge = (): void => {
    this.#deadlineTimer = undefined;
    const inFlight = this.#inFlight;
    const now = performance.now();
    let due = 0;
    while (due < inFlight.length && inFlight[due]!.deadline <= now) due++;
    if (due > 0) {
      const expired = inFlight.splice(0, due);
      setImmediate(() => {
        for (const batch of expired) this.#expire(batch);
      });
    }
    this.#dropAnswered();
    // setTimeout rounds to whole milliseconds and may fire a fraction early.
    if (inFlight.length > 0)
      this.#deadlineTimer = setTimeout(this.#judge, Math.ceil(inFlight[0]!.deadline - now)).unref();
  };

  #expire(batch: Batch): void {
    if (batch.unsettled === 0) return;
    const err = new StoreUnavailableError(`no reply within ${this.#timeoutMs}ms`);
    for (const p of batch.entries) this.#settle(batch, p, err);
    // The batches waiting behind it fail with it: the store answers calls in order, so theirs
    // would come after the one it did not answer in time (a stalled store holds none longer).
    const waiting = this.#waiting.splice(0);
    if (this.#open !== undefined && waiting.includes(this.#open)) this.#open = undefined;
    for (const w of waiting) for (const p of w.entries) this.#settle(w, p, err);
  }

  /** Answered batches leave the front of the queue (replies mostly come in order). */
  #dropAnswered(): void {
    const inFlight = this.#inFlight;
    let answered = 0;
    while (answered < inFlight.length && inFlight[answered]!.unsettled === 0) answered++;
    if (answered === 1) inFlight.shift();
    else if (answered > 1) inFlight.splice(0, answered);
  }

  #settle(batch: Batch, p: Pending, outcome: WindowResult[] | Error): void {
    if (p.settled) return;
    p.settled = true;
    const observer = this.#observer;
    if (observer) {
      if (outcome instanceof Error) observer.storeError();
      else observer.storeAnswered?.();
      observer.storeRoundTrip((performance.now() - p.started) / 1000);
    }
    if (outcome instanceof Error) p.reject(outcome);
    else {
      this.#tap?.(p.windows, outcome);
      p.resolve(outcome);
    }
    if (--batch.unsettled > 0) return;
    if (batch.written) this.#unanswered--;
    if (this.#inFlight[0] === batch) this.#dropAnswered();
    if (this.#waiting.length > 0 && !this.#releasing) {
      this.#releasing = true;
      atTurnEnd('send', this.#release);
    }
  }
}

const unavailable = (err: unknown): Error =>
  err instanceof StoreUnavailableError
    ? err
    : new StoreUnavailableError(`store: ${(err as Error).message}`, { cause: err });
