import { MIN_SLICE } from '../limits/window-maths/lease.js';
import {
  EXACT,
  forget,
  heldResult,
  LEASE,
  LOCAL,
  mergeGrant,
  spendAround,
  unheld,
  wayOf,
  type Held,
} from './lease-holdings.js';
import type { LeaseBackend, LeaseGrant } from './lease-script.js';
import type { KeysOn } from './redis-connection.js';
import {
  StoreUnavailableError,
  WrappingStore,
  type ResultTap,
  type StoreObserver,
  type WindowRequest,
  type WindowResult,
  type WindowStore,
} from './window-store.js';
import { observedCall } from './observed-call.js';
import { settledWithin, withTimeout } from './with-timeout.js';
import { steadyNow } from './steady-clock.js';

export interface LeasingStoreOptions {
  /** How long a lease or a give-back may take (store.redis.commandTimeout). */
  readonly timeoutMs: number;
  /** The live gateway instances (the heartbeats'); a slice is at most 1 ÷ (spread × instances) of what remains. */
  readonly instances: () => number;
  /** Default: a steady clock (see steadyNow). */
  readonly now?: () => number;
  /** How often slices of ended windows are forgotten. */
  readonly sweepIntervalMs?: number;
  /** Windows held at most (distinct keys); beyond, a new key's requests are counted exactly. */
  readonly maxKeys?: number;
  /** The store metrics: each lease and give-back is one round trip (and an error when it fails or times out). */
  readonly observer?: StoreObserver;
}

/** Windows held at most by default: a leased per-client limiter under a flood of clients stays bounded. */
export const DEFAULT_LEASED_KEYS = 10_000;

/** Counters for tests and the bench. */
export interface LeaseStats {
  leases: number;
  granted: number;
  returned: number;
  localHits: number;
}

/**
 * Hot keys without round trips (config `lease`, docs/limiting.md#leases): a decorator in front of
 * the batching store. A leased window's requests are admitted from a slice this instance leased
 * from the store, which counted the slice when it granted it, so every instance together admits at
 * most the limit. A request whose other windows go to the store holds its share of the slice out
 * until the store answers, and puts it back when the store refuses (a refused request spends
 * nothing). Requests waiting for a window's slice share one lease. When what remains is too
 * small for a slice, the window is counted exactly (the inner store) until it resets. Unspent
 * slices are given back at close; those of a window that ended are lost with it, and those of a
 * Redis that came back without its data are dropped (the backend's dataset watch tells).
 */
export class LeasingStore extends WrappingStore implements ResultTap {
  readonly #backend: LeaseBackend;
  readonly #timeoutMs: number;
  readonly #instances: () => number;
  readonly #now: () => number;
  readonly #held = new Map<string, Held>();
  readonly #maxKeys: number;
  readonly #sweeper: NodeJS.Timeout;
  readonly #observer: StoreObserver | undefined;
  readonly #dataset: LeaseBackend['dataset'];
  readonly stats: LeaseStats = { leases: 0, granted: 0, returned: 0, localHits: 0 };
  #closing: Promise<void> | undefined;
  #tap: ((requests: readonly WindowRequest[], results: WindowResult[]) => void) | undefined;

  constructor(inner: WindowStore, backend: LeaseBackend, options: LeasingStoreOptions) {
    super(inner);
    this.#backend = backend;
    this.#timeoutMs = options.timeoutMs;
    this.#instances = options.instances;
    this.#now = options.now ?? steadyNow;
    this.#maxKeys = options.maxKeys ?? DEFAULT_LEASED_KEYS;
    this.#observer = options.observer;
    this.#dataset = backend.dataset;
    this.#dataset?.onLost((keys) => this.#dropLost(keys));
    this.#sweeper = setInterval(() => this.#sweep(), options.sweepIntervalMs ?? 10_000);
    this.#sweeper.unref();
  }

  /** Units this instance holds unspent, over every window (tests, the bench). */
  get unspent(): number {
    let sum = 0;
    for (const key of this.#held.keys()) sum += this.unspentOf(key);
    return sum;
  }

  /** Windows this instance holds (their slices, or a lease in flight), ended ones not yet forgotten. */
  get windows(): number {
    return this.#held.size;
  }

  /** Units this instance holds unspent of a window that has not ended (tests). */
  unspentOf(key: string): number {
    const h = this.#held.get(key);
    return h && h.resetAtMs > this.#now() ? h.left : 0;
  }

  /**
   * The over-limit cache sees the store's answers: the inner store shows them (the batching store,
   * no then() per request), or this store does. Answers from a slice are not shown: a slice never
   * refuses, and the window's next request after it is spent goes to the store.
   */
  tapResults(tap: (requests: readonly WindowRequest[], results: WindowResult[]) => void): void {
    const inner = this.inner as Partial<ResultTap>;
    if (typeof inner.tapResults === 'function') inner.tapResults(tap);
    else this.#tap = tap;
  }

  hit(windows: readonly WindowRequest[]): Promise<WindowResult[]> {
    for (let i = 0; i < windows.length; i++)
      if (windows[i]!.lease !== undefined) return this.#hitLeased(windows, undefined);
    // A reload took `lease` off: what was held of these windows goes back.
    if (this.#held.size > 0) for (let i = 0; i < windows.length; i++) this.#retireIfHeld(windows[i]!);
    return this.#innerHit(windows);
  }

  /** A field, not a method: handed to spendAround as it is, no closure per request. */
  readonly #innerHit = (windows: readonly WindowRequest[]): Promise<WindowResult[]> => {
    const tap = this.#tap;
    const answered = this.inner.hit(windows);
    return tap ? answered.then((results) => (tap(windows, results), results)) : answered;
  };

  /** `leased`: the windows a lease was already asked for on this request's behalf. */
  #hitLeased(windows: readonly WindowRequest[], leased: Set<string> | undefined): Promise<WindowResult[]> {
    if (this.#closing) return this.#innerHit(windows); // closing: the slices are going back
    // Reconnected to a Redis not yet known to hold what was leased: nothing spent from a slice.
    if (this.#dataset?.checking) return this.#innerHit(windows);
    const now = this.#now();
    const n = windows.length;
    const local = new Array<Held | undefined>(n);
    let toLease: WindowRequest | undefined;
    let exact = false;
    for (let i = 0; i < n; i++) {
      const w = windows[i]!;
      const h = this.#retireIfHeld(w);
      let way = wayOf(w, h, now);
      // Asked once for this request and still short (others spent the slice first): exactly.
      if (way === LEASE && leased?.has(w.key)) way = EXACT;
      // Bounded: with every slot taken, a new key is counted exactly (no slice to hold for it).
      if (way === LEASE && !h && this.#held.size >= this.#maxKeys) way = EXACT;
      if (way === LOCAL) local[i] = h;
      else if (way === LEASE) toLease ??= w;
      else exact = true;
    }
    // A window needs a slice first: once it comes, the request is looked at again.
    if (toLease) {
      const key = toLease.key;
      return this.#leaseFor(toLease).then(() => this.#hitLeased(windows, (leased ?? new Set()).add(key)));
    }
    // Every window spent here (the hot key's common case): no round trip.
    if (!exact) {
      const results = new Array<WindowResult>(n);
      for (let i = 0; i < n; i++) {
        const w = windows[i]!;
        const h = local[i]!;
        h.left -= w.cost ?? 1;
        results[i] = heldResult(w, h);
      }
      this.stats.localHits++;
      return Promise.resolve(results);
    }
    // Some windows go to the store: ours are held out until it answers.
    return spendAround(windows, local, this.#innerHit);
  }

  /**
   * What is held of `w`'s window, unless it was leased under another config (a reload changed the
   * limit, or took `lease` off): then its unspent slice goes back, never spent under the new
   * config (a lower limit could be exceeded), and the window leases afresh by the new one.
   * Held while a lease is in flight: the grant takes the asker's limit, and requests of another
   * are counted exactly meanwhile.
   */
  #retireIfHeld(w: WindowRequest): Held | undefined {
    const h = this.#held.get(w.key);
    // (`lease` comes only on fixed windows without a ban: the config refuses it on the others.)
    if (!h || h.pending || (h.limit === w.limit && w.lease !== undefined)) return h;
    this.#held.delete(w.key);
    void this.#giveBack(w.key, h);
    return undefined;
  }

  /** The window's lease in flight, or a new one; resolves once it is answered, rejects on failure or timeout. */
  #leaseFor(w: WindowRequest): Promise<void> {
    let h = this.#held.get(w.key);
    const now = this.#now();
    if (h && h.resetAtMs <= now && !h.pending) {
      this.#held.delete(w.key); // the window ended: its unspent slices are lost with it
      h = undefined;
    }
    const pending = h?.pending ?? this.#ask(w, h, now);
    const ms = this.#timeoutMs;
    return withTimeout(pending, ms, () => new StoreUnavailableError(`lease: no reply within ${ms}ms`));
  }

  #ask(w: WindowRequest, h: Held | undefined, sentAt: number): Promise<void> {
    const rule = w.lease!;
    const divisor = rule.spread * Math.max(1, this.#instances());
    const need = Math.max(MIN_SLICE, w.cost ?? 1);
    // A calendar window's period is the time to its boundary (the store key's expiry).
    const ask = { key: w.key, limit: w.limit, periodMs: w.periodMs, divisor, max: rule.max, need };
    this.stats.leases++;
    const pending = observedCall(this.#observer, this.#timeoutMs, this.#backend.lease(ask)).then(
      (grant) => this.#granted(w, grant, sentAt, divisor),
      (err: unknown) => {
        const held = this.#held.get(w.key);
        if (held) held.pending = undefined;
        throw new StoreUnavailableError(`lease: ${(err as Error).message}`, { cause: err });
      },
    );
    const holder = h ?? unheld(w.limit);
    holder.pending = pending;
    if (!h) this.#held.set(w.key, holder);
    return pending;
  }

  /** A grant: the slice is added to what is held (the same window) or starts anew (a new window). */
  #granted(w: WindowRequest, grant: LeaseGrant, sentAt: number, divisor: number): void {
    this.stats.granted += grant.slice;
    // Measured from when the lease was asked: never later than the store's own window end.
    let resetAtMs = sentAt + grant.ttlMs;
    if (w.endsAtMs !== undefined) resetAtMs = Math.min(resetAtMs, w.endsAtMs);
    let h = this.#held.get(w.key);
    if (!h) this.#held.set(w.key, (h = unheld(w.limit)));
    mergeGrant(h, w, grant, resetAtMs, divisor);
    // Closing: a grant that arrives now goes straight back.
    if (this.#closing && h.left > 0) void this.#giveBack(w.key, h);
  }

  /** Gives a window's unspent slices back (at most once: what is held drops to 0 first). */
  async #giveBack(key: string, h: Held): Promise<void> {
    const unspent = h.left;
    if (unspent <= 0 || h.resetAtMs <= this.#now()) return;
    h.left = 0;
    // A server not yet known to hold the slice may be a new, empty one: taking it off there would
    // over-admit. Kept instead: under-admission, within the documented bound.
    if (this.#dataset?.checking) return;
    try {
      this.stats.returned += await observedCall(
        this.#observer,
        this.#timeoutMs,
        this.#backend.returnLease(key, unspent, h.endsAt),
      );
    } catch {
      // Not given back: the window under-admits by it until it ends (the documented bound).
    }
  }

  /** Redis came back without these keys' windows: their slices are dropped (under-admission only). */
  #dropLost(keys: KeysOn): void {
    for (const [key, h] of this.#held) {
      if (!keys(key)) continue;
      forget(h);
      if (!h.pending) this.#held.delete(key);
    }
  }

  #sweep(): void {
    const now = this.#now();
    for (const [key, h] of this.#held) if (h.resetAtMs <= now && !h.pending) this.#held.delete(key);
  }

  /** Gives every unspent slice back (bounded by the timeout), then closes the inner store. */
  override close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    clearInterval(this.#sweeper);
    const pending = [...this.#held.values()].flatMap((h) => (h.pending ? [h.pending] : []));
    await settledWithin(pending, this.#timeoutMs);
    const back = [...this.#held].map(([key, h]) => this.#giveBack(key, h));
    await settledWithin(back, this.#timeoutMs);
    this.#held.clear();
    await this.inner.close();
  }
}
