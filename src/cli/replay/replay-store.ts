/**
 * The windows of `tollgate replay`: the memory store's decisions (the same window maths, the same
 * ban book, all-or-nothing counting) with the per-hit work cut for a log of millions of lines.
 * Each window of each key is a Slot, found once by key and then held by the caller's cached
 * requests, so a hit looks nothing up; a slot's counts change in place (nothing is allocated for
 * a fixed window's hit). Memory is bounded as the memory store's: expired slots are swept, and a
 * full store evicts the slot that resets soonest at the front of some group.
 */
import {
  slidingResetAt,
  slidingRetryAt,
  slidingRoll,
  slidingUsed,
  type SlidingCounts,
} from '../../limits/window-maths/sliding.js';
import {
  bucketResetAt,
  bucketRetryAt,
  bucketRoll,
  bucketSpend,
  bucketUsed,
  type Bucket,
} from '../../limits/window-maths/token-bucket.js';
import { BanBook } from '../../store/ban-book.js';
import type { WindowRequest, WindowResult } from '../../store/window-store.js';
import { groupOf, Reused, set, Slot } from './slot.js';

export { Slot } from './slot.js';

/** What a replay's simulation needs of a store (the memory store has the same, without the slots). */
export interface ReplayWindows {
  /** Counts the request in its windows (all or nothing); `slots`, index by index, caches their slots. */
  hitNow(requests: readonly WindowRequest[], slots?: (Slot | undefined)[]): WindowResult[];
  /**
   * hitNow's decision, read at once: its results (without retryAtMs, which replay never reads)
   * may be objects the next call reuses. With `keyed`, `requests` are the windows without their
   * keys (shared by every client of a route, no bans), `keyed` the same with the client's keys:
   * read only when a slot is looked up. The memory store has none: the simulation falls back.
   */
  decideNow?(
    requests: readonly WindowRequest[],
    slots?: (Slot | undefined)[],
    keyed?: readonly WindowRequest[],
  ): readonly WindowResult[];
  sweep(now: number): void;
  close(): Promise<void>;
}

export class ReplayStore implements ReplayWindows {
  readonly #groups = new Map<number | string, Map<string, Slot>>();
  readonly #maxKeys: number;
  readonly #now: () => number;
  readonly #bans: BanBook;
  #size = 0;
  /** Slots left by the last sweep: the next waits for twice as many (a sweep reads every slot). */
  #swept = 0;
  // Per hit, reused: the request's slots, and a sliding window's or bucket's state at now.
  readonly #slots: Slot[] = [];
  readonly #rolled: (SlidingCounts | Bucket | undefined)[] = [];
  readonly #used: number[] = [];
  /** decideNow's results, and its arrays of them by length. */
  readonly #reused: Reused[] = [];
  readonly #views: Reused[][] = [];

  constructor(options: { readonly maxKeys: number; readonly now: () => number }) {
    this.#maxKeys = options.maxKeys;
    this.#now = options.now;
    this.#bans = new BanBook(options.maxKeys);
  }

  get size(): number {
    return this.#size;
  }

  hitNow(requests: readonly WindowRequest[], cached?: (Slot | undefined)[]): WindowResult[] {
    return this.#hit(requests, cached, true) as WindowResult[];
  }

  decideNow(
    requests: readonly WindowRequest[],
    cached?: (Slot | undefined)[],
    keyed?: readonly WindowRequest[],
  ): readonly WindowResult[] {
    return this.#hit(requests, cached, false, keyed);
  }

  /** `full`: new results, with retry times; else reused ones without (unless a ban is settled in them). */
  #hit(
    requests: readonly WindowRequest[],
    cached: (Slot | undefined)[] | undefined,
    full: boolean,
    keyed: readonly WindowRequest[] = requests,
  ): readonly WindowResult[] {
    const now = this.#now();
    const n = requests.length;
    let blocked = false;
    let bans = false;
    for (let i = 0; i < n; i++) {
      const r = requests[i]!;
      let s = cached?.[i];
      if (s === undefined || s.gone) {
        s = this.#slot(keyed[i]!, keyed, now);
        if (cached) cached[i] = s;
      }
      this.#slots[i] = s;
      let used: number;
      if (r.algorithm === undefined) used = s.resetAtMs > now ? s.count : 0;
      else if (r.algorithm === 'sliding') {
        const state = slidingRoll(s.held ? s : undefined, now, r.periodMs);
        this.#rolled[i] = state;
        used = slidingUsed(state, now, r.periodMs);
      } else {
        const state = bucketRoll(s.held ? s : undefined, now);
        this.#rolled[i] = state;
        used = bucketUsed(state, now, r.periodMs, r.rate!, r.limit);
      }
      this.#used[i] = used;
      if (r.enforce && used + (r.cost ?? 1) > r.limit) blocked = true;
      if (r.ban !== undefined) bans = true;
    }
    const banned = bans && this.#bans.blocks(requests, now); // a live ban blocks: nothing counted
    if (banned) blocked = true;
    // The ban book writes its fields into new results: never into reused ones.
    const reuse = !full && !bans;
    const results: WindowResult[] = reuse ? this.#view(n) : new Array(n);
    for (let i = 0; i < n; i++) {
      const r = requests[i]!;
      const s = this.#slots[i]!;
      const cost = r.cost ?? 1;
      const used = this.#used[i]!;
      const allowed = used + cost <= r.limit;
      if (r.algorithm === undefined) {
        const live = s.resetAtMs > now;
        if (!blocked) {
          if (!live) {
            s.count = 0;
            s.resetAtMs = r.endsAtMs ?? now + r.periodMs;
          }
          s.count += cost;
        }
        const counted = !blocked || live;
        const count = counted ? s.count : 0;
        const resetAtMs = counted ? s.resetAtMs : now + r.periodMs;
        if (reuse) set(results[i] as Reused, count, r.limit, resetAtMs, allowed);
        else results[i] = { count, limit: r.limit, resetAtMs, allowed };
      } else {
        const out = reuse ? (results[i] as Reused) : undefined;
        results[i] = this.#count(r, s, this.#rolled[i]!, used, allowed, blocked, now, out);
      }
    }
    if (bans) this.#bans.settle(requests, results, banned, blocked, now);
    return results;
  }

  /**
   * A sliding window or token bucket: counted unless the request is blocked, and its result,
   * written into `out` (without a retry time) when given.
   */
  #count(
    r: WindowRequest,
    s: Slot,
    rolled: SlidingCounts | Bucket,
    used: number,
    allowed: boolean,
    blocked: boolean,
    now: number,
    out: Reused | undefined,
  ): WindowResult {
    const cost = r.cost ?? 1;
    const count = blocked ? used : used + cost;
    if (r.algorithm === 'sliding') {
      let state = rolled as SlidingCounts;
      if (!blocked) {
        s.window = state.window;
        s.previous = state.previous;
        s.current = state.current + cost;
        s.held = true;
        s.resetAtMs = slidingResetAt(s, now, r.periodMs);
        state = s;
      }
      const resetAtMs = slidingResetAt(state, now, r.periodMs);
      if (out) return set(out, count, r.limit, resetAtMs, allowed);
      const retryAtMs = slidingRetryAt(state, now, r.periodMs, r.limit, cost);
      return { count, limit: r.limit, allowed, resetAtMs, retryAtMs };
    }
    let b = rolled as Bucket;
    if (!blocked) {
      const spent = bucketSpend(b, r.periodMs, r.rate!, cost);
      s.tat = spent.tat;
      s.frac = spent.frac;
      s.held = true;
      s.resetAtMs = bucketResetAt(s, now);
      b = s;
    }
    const resetAtMs = bucketResetAt(b, now);
    if (out) return set(out, count, r.limit, resetAtMs, allowed);
    const retryAtMs = bucketRetryAt(b, now, r.periodMs, r.rate!, r.limit, cost);
    return { count, limit: r.limit, allowed, resetAtMs, retryAtMs };
  }

  /** `n` reused results (the same objects for every length: one call's are read before the next). */
  #view(n: number): Reused[] {
    let view = this.#views[n];
    if (view === undefined) {
      while (this.#reused.length < n) this.#reused.push(new Reused());
      this.#views[n] = view = this.#reused.slice(0, n);
    }
    return view;
  }

  /**
   * Drops expired slots (one that resets by `now` holds nothing the maths would read: a fixed
   * window starts again, a sliding window's counts and a bucket's TAT have run out). A sweep
   * reads every slot, and a swept key that comes back costs a new slot: so only once the store
   * holds twice the slots the last sweep left (and SWEEP_FROM at least).
   */
  sweep(now: number): void {
    if (this.#size < Math.max(SWEEP_FROM, 2 * this.#swept)) return;
    this.#sweepAll(now);
    this.#bans.sweep(now);
  }

  async close(): Promise<void> {
    for (const group of this.#groups.values()) for (const s of group.values()) s.gone = true;
    this.#groups.clear();
    this.#bans.clear();
    this.#size = 0;
  }

  #sweepAll(now: number): void {
    for (const [name, group] of this.#groups) {
      for (const [key, s] of group) {
        if (s.resetAtMs > now) continue;
        s.gone = true;
        group.delete(key);
        this.#size--;
      }
      // A calendar window's group is done once its boundary passed.
      if (group.size === 0 && typeof name === 'string' && name.startsWith('@')) this.#groups.delete(name);
    }
    this.#swept = this.#size;
  }

  /** The request's slot: found by its key, else made (room made first when the store is full). */
  #slot(r: WindowRequest, current: readonly WindowRequest[], now: number): Slot {
    const name = groupOf(r);
    let group = this.#groups.get(name);
    if (!group) this.#groups.set(name, (group = new Map()));
    let s = group.get(r.key);
    if (s) return s;
    if (this.#size >= this.#maxKeys) this.#sweepAll(now);
    while (this.#size >= this.#maxKeys && this.#evictSoonest(current)) {
      // evicted one
    }
    group.set(r.key, (s = new Slot(r.key, group)));
    this.#size++;
    return s;
  }

  /** Evicts the slot that resets soonest of the groups' first ones, sparing the current request's. */
  #evictSoonest(current: readonly WindowRequest[]): boolean {
    let victim: Slot | undefined;
    for (const group of this.#groups.values()) {
      for (const s of group.values()) {
        if (current.some((r) => r.key === s.key)) continue;
        if (!victim || s.resetAtMs < victim.resetAtMs) victim = s;
        break;
      }
    }
    if (!victim) return false;
    victim.gone = true;
    victim.group.delete(victim.key);
    this.#size--;
    return true;
  }
}

/** Slots held before a sweep is worth its read of every slot. */
const SWEEP_FROM = 65_536;
