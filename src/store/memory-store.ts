import {
  READY,
  type Readiness,
  type StoreObserver,
  type WindowRequest,
  type WindowResult,
  type WindowStore,
} from './window-store.js';

interface Window {
  count: number;
  resetAtMs: number;
}

export interface MemoryStoreOptions {
  readonly maxKeys: number;
  readonly sweepIntervalMs: number;
  readonly now?: () => number;
  /** Told of every hit: its time (the store answers at once, so no wrapper has to time it). */
  readonly observer?: StoreObserver;
}

/**
 * Fixed windows in this process: the same semantics as the Redis store, for a single instance.
 * Memory is bounded. Windows are kept in one Map per period, where creation order is also expiry
 * order, so expired windows are dropped from the front and, when the store is full, the window
 * that resets soonest is the one evicted (never one the current request uses).
 */
export class MemoryStore implements WindowStore {
  readonly #byPeriod = new Map<number, Map<string, Window>>();
  #size = 0;
  readonly #maxKeys: number;
  readonly #now: () => number;
  readonly #sweeper: NodeJS.Timeout;
  readonly #observer: StoreObserver | undefined;

  constructor(options: MemoryStoreOptions) {
    this.#maxKeys = options.maxKeys;
    this.#now = options.now ?? Date.now;
    this.#observer = options.observer;
    this.#sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs);
    this.#sweeper.unref();
  }

  get size(): number {
    return this.#size;
  }

  hit(requests: readonly WindowRequest[]): Promise<WindowResult[]> {
    const started = this.#observer ? performance.now() : 0;
    const results = this.#hit(requests);
    this.#observer?.storeRoundTrip((performance.now() - started) / 1000);
    return Promise.resolve(results);
  }

  // Loops rather than map/some callbacks: no closure per request.
  #hit(requests: readonly WindowRequest[]): WindowResult[] {
    const now = this.#now();
    const n = requests.length;
    const live: (Window | undefined)[] = new Array(n);
    let blocked = false;
    for (let i = 0; i < n; i++) {
      const r = requests[i]!;
      const w = this.#byPeriod.get(r.periodMs)?.get(r.key);
      live[i] = w && w.resetAtMs > now ? w : undefined;
      if (r.enforce && (live[i]?.count ?? 0) + (r.cost ?? 1) > r.limit) blocked = true;
    }
    const results: WindowResult[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const r = requests[i]!;
      let w = live[i];
      const allowed = (w?.count ?? 0) + (r.cost ?? 1) <= r.limit;
      if (!blocked) {
        if (!w) {
          w = { count: 0, resetAtMs: now + r.periodMs };
          this.#insert(r, w, requests, now);
        }
        w.count += r.cost ?? 1;
      }
      results[i] = {
        count: w?.count ?? 0,
        limit: r.limit,
        resetAtMs: w?.resetAtMs ?? now + r.periodMs,
        allowed,
      };
    }
    return results;
  }

  /** Drops expired windows: from the front of each period's Map, stopping at the first live one. */
  sweep(now = this.#now()): void {
    for (const windows of this.#byPeriod.values()) {
      for (const [key, w] of windows) {
        if (w.resetAtMs > now) break;
        windows.delete(key);
        this.#size--;
      }
    }
  }

  async connect(): Promise<boolean> {
    return true;
  }

  async readiness(): Promise<Readiness> {
    return READY;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#byPeriod.clear();
    this.#size = 0;
  }

  #insert(r: WindowRequest, w: Window, current: readonly WindowRequest[], now: number): void {
    let windows = this.#byPeriod.get(r.periodMs);
    if (!windows) this.#byPeriod.set(r.periodMs, (windows = new Map()));
    const stale = windows.get(r.key);
    if (stale) {
      windows.delete(r.key); // expired: re-insert at the back, where its new expiry belongs
      this.#size--;
    }
    if (this.#size >= this.#maxKeys) this.sweep(now); // cheap: stops at the first live window
    while (this.#size >= this.#maxKeys && this.#evictSoonest(current)) {
      // evicted one
    }
    windows.set(r.key, w);
    this.#size++;
  }

  /** Evicts the window that resets soonest (the oldest of some period), sparing the current request's. */
  #evictSoonest(current: readonly WindowRequest[]): boolean {
    let victim: { windows: Map<string, Window>; key: string; resetAtMs: number } | undefined;
    for (const windows of this.#byPeriod.values()) {
      for (const [key, w] of windows) {
        if (current.some((r) => r.key === key)) continue;
        if (!victim || w.resetAtMs < victim.resetAtMs) victim = { windows, key, resetAtMs: w.resetAtMs };
        break; // the first spare entry is this period's soonest
      }
    }
    if (!victim) return false;
    victim.windows.delete(victim.key);
    this.#size--;
    return true;
  }
}
