import { performance } from 'node:perf_hooks';
import { slidingRetryAt, type SlidingCounts } from '../limits/window-maths/sliding.js';
import { bucketRetryAt, bucketSpend, type Bucket } from '../limits/window-maths/token-bucket.js';
import {
  fixedGroup,
  groupOf,
  peek,
  REPLACE_AFTER,
  resetAt,
  type Peeked,
  type Window,
} from './memory-windows.js';
import { BanBook } from './ban-book.js';
import {
  READY,
  type BanEntry,
  type Readiness,
  type StoreObserver,
  type WindowRequest,
  type WindowResult,
  type WindowStore,
} from './window-store.js';

export interface MemoryStoreOptions {
  readonly maxKeys: number;
  readonly sweepIntervalMs: number;
  readonly now?: () => number;
  /** Told of every hit: its time (the store answers at once, so no wrapper has to time it). */
  readonly observer?: StoreObserver;
}

/**
 * Windows in this process: the same semantics as the Redis store, for a single instance.
 * Memory is bounded. Fixed windows are kept in one Map per period, where creation order is also
 * expiry order, so expired windows are dropped from the front and, when the store is full, the
 * window that resets soonest is the one evicted (never one the current request uses). Sliding
 * windows and token buckets have Maps of their own, re-inserted at a hit when last placed more
 * than an eighth of their period before (else updated in place): there that order is last-hit
 * order to within that eighth, close to (not exactly) expiry order, so a sweep may leave some
 * expired entries for later and eviction takes about the least recently hit.
 */
export class MemoryStore implements WindowStore {
  readonly #byPeriod = new Map<number | string, Map<string, Window>>();
  #size = 0;
  readonly #maxKeys: number;
  readonly #now: () => number;
  readonly #sweeper: NodeJS.Timeout;
  readonly #observer: StoreObserver | undefined;
  readonly #bans: BanBook;

  constructor(options: MemoryStoreOptions) {
    this.#maxKeys = options.maxKeys;
    this.#bans = new BanBook(options.maxKeys);
    this.#now = options.now ?? Date.now;
    this.#observer = options.observer;
    this.#sweeper = setInterval(() => {
      this.sweep();
      this.#bans.sweep(this.#now()); // [bans] not in sweep(): that also runs when the store is full
    }, options.sweepIntervalMs);
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

  /** hit() without the promise: `tollgate replay` drives a store of its own, on the log's clock. */
  hitNow(requests: readonly WindowRequest[]): WindowResult[] {
    return this.#hit(requests);
  }

  // Loops rather than map/some callbacks: no closure per request. Fixed windows (no algorithm)
  // take the first branch only, as before the other algorithms came.
  #hit(requests: readonly WindowRequest[]): WindowResult[] {
    const now = this.#now();
    const n = requests.length;
    const live: (Window | undefined)[] = new Array(n);
    let peeked: (Peeked | undefined)[] | undefined;
    let blocked = false;
    for (let i = 0; i < n; i++) {
      const r = requests[i]!;
      if (r.algorithm === undefined) {
        const w = this.#byPeriod.get(fixedGroup(r))?.get(r.key);
        live[i] = w && w.resetAtMs > now ? w : undefined;
        if (r.enforce && (live[i]?.count ?? 0) + (r.cost ?? 1) > r.limit) blocked = true;
      } else {
        const p = peek(r, this.#byPeriod.get(groupOf(r))?.get(r.key), now);
        (peeked ??= new Array(n))[i] = p;
        if (r.enforce && p.used + (r.cost ?? 1) > r.limit) blocked = true;
      }
    }
    const banned = this.#bans.blocks(requests, now); // [bans] a live ban blocks: nothing counted
    if (banned) blocked = true;
    const results: WindowResult[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const r = requests[i]!;
      if (r.algorithm !== undefined) {
        results[i] = this.#count(r, peeked![i]!, blocked, requests, now);
        continue;
      }
      let w = live[i];
      const allowed = (w?.count ?? 0) + (r.cost ?? 1) <= r.limit;
      if (!blocked) {
        if (!w) {
          w = { count: 0, resetAtMs: r.endsAtMs ?? now + r.periodMs };
          this.#insert(fixedGroup(r), r.key, w, requests, now);
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
    this.#bans.settle(requests, results, banned, blocked, now); // [bans]
    return results;
  }

  /** A sliding window or token bucket: counted unless the request is blocked, and its result. */
  #count(
    r: WindowRequest,
    p: Peeked,
    blocked: boolean,
    requests: readonly WindowRequest[],
    now: number,
  ): WindowResult {
    const cost = r.cost ?? 1;
    const allowed = p.used + cost <= r.limit;
    const state = blocked
      ? p.state
      : r.algorithm === 'sliding'
        ? { ...(p.state as SlidingCounts), current: (p.state as SlidingCounts).current + cost }
        : bucketSpend(p.state as Bucket, r.periodMs, r.rate!, cost);
    const resetAtMs = resetAt(r, state, now); // the entry's expiry and the answer's reset
    if (!blocked) {
      const w = p.entry;
      if (w !== undefined && now - w.placedAtMs! < r.periodMs * REPLACE_AFTER) {
        w.state = state;
        w.resetAtMs = resetAtMs;
      } else {
        // Re-inserted at the back (#insert drops the old entry), where its new expiry belongs.
        const entry = { count: 0, resetAtMs, state, placedAtMs: now };
        this.#insert(groupOf(r), r.key, entry, requests, now);
      }
    }
    const count = blocked ? p.used : p.used + cost;
    if (r.algorithm === 'sliding') {
      const s = state as SlidingCounts;
      return {
        count,
        limit: r.limit,
        allowed,
        resetAtMs,
        retryAtMs: slidingRetryAt(s, now, r.periodMs, r.limit, cost),
      };
    }
    const b = state as Bucket;
    return {
      count,
      limit: r.limit,
      allowed,
      resetAtMs,
      retryAtMs: bucketRetryAt(b, now, r.periodMs, r.rate!, r.limit, cost),
    };
  }

  /** Drops expired windows: from the front of each period's Map, stopping at the first live one. */
  sweep(now = this.#now()): void {
    for (const [group, windows] of this.#byPeriod) {
      for (const [key, w] of windows) {
        if (w.resetAtMs > now) break;
        windows.delete(key);
        this.#size--;
      }
      // A calendar period's Map is done once its boundary passed.
      if (windows.size === 0 && typeof group === 'string' && group.startsWith('@'))
        this.#byPeriod.delete(group);
    }
  }

  async connect(): Promise<boolean> {
    return true;
  }

  async readiness(): Promise<Readiness> {
    return READY;
  }

  async listBans(prefix: string, max: number): Promise<{ bans: BanEntry[]; truncated: boolean }> {
    return this.#bans.list(prefix, max, this.#now());
  }

  async liftBan(key: string, strikesKey: string): Promise<boolean> {
    return this.#bans.lift(key, strikesKey, this.#now());
  }

  async close(): Promise<void> {
    this.#bans.clear();
    clearInterval(this.#sweeper);
    this.#byPeriod.clear();
    this.#size = 0;
  }

  #insert(
    group: number | string,
    key: string,
    w: Window,
    current: readonly WindowRequest[],
    now: number,
  ): void {
    let windows = this.#byPeriod.get(group);
    if (!windows) this.#byPeriod.set(group, (windows = new Map()));
    const stale = windows.get(key);
    if (stale) {
      windows.delete(key); // expired: re-insert at the back, where its new expiry belongs
      this.#size--;
    }
    if (this.#size >= this.#maxKeys) this.sweep(now); // cheap: stops at the first live window
    while (this.#size >= this.#maxKeys && this.#evictSoonest(current)) {
      // evicted one
    }
    windows.set(key, w);
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
