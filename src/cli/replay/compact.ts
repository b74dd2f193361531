/**
 * Replay's compact lane, for a config with none of the policies that take the longer way (tiers,
 * overrides, allow and deny lists, costs, bans, calendar windows): each key of a limiter is one
 * row of numbers in one Float64Array, its statistics (requests, refused, peak) and then each
 * window's state (fixed: count, reset; sliding: held, window, current, previous; bucket: held,
 * TAT, remainder). A client's cached keys hold its rows' offsets, so a line reads a row or two per
 * config instead of a dozen objects (the simulation is memory-bound: 20,000 clients' objects are
 * far more than the caches hold). The decision is replay-store.ts's, step by step, with the same
 * window maths (sliding.ts, token-bucket.ts) on the row's numbers. Nothing is swept: an expired
 * window's state decides as a new one's (what lets the store sweep it). The rows stand for the
 * store's slots one to one (checked when a row is found); when they could not (a key shared by
 * two rows), or the lane would hold more keys than its bound (it sweeps nothing), CompactUnfit is
 * thrown and the caller replays on the generic path.
 */
import { slidingRoll, slidingUsed, type SlidingCounts } from '../../limits/window-maths/sliding.js';
import { bucketRoll, bucketSpend, bucketUsed, type Bucket } from '../../limits/window-maths/token-bucket.js';
import type { WindowRequest } from '../../store/window-store.js';
import { FIXED, SLIDING, type CompactRoute } from './compact-route.js';
import type { KeyStats, LimiterStats, RouteStats } from './stats.js';

export { compactFits, compactRoute, type CompactRoute } from './compact-route.js';

/** The compact lane cannot stand for the store here: replay again on the generic path. */
export class CompactUnfit extends Error {}

/** A window's rolled state between the decision's two passes (the maths' objects). */
class Scratch implements SlidingCounts, Bucket {
  window = 0;
  current = 0;
  previous = 0;
  tat = 0;
  frac = 0;
}

/** A client's rows on a route's limiters: the first's (-1: not found yet), and all of them when more than one. */
export interface ClientRows {
  row0: number;
  rows: readonly number[] | undefined;
}

/**
 * The numbers rows are cut from, shared by the simulations of one replay: a line's first client
 * gets its candidate and baseline rows side by side, so the second is read with the first.
 */
export class RowData {
  data = new Float64Array(1 << 16);
  #top = 0;

  /** A zeroed row of `size` numbers. */
  alloc(size: number): number {
    if (this.#top + size > this.data.length) {
      const grown = new Float64Array(Math.max(this.data.length * 2, this.#top + size));
      grown.set(this.data);
      this.data = grown;
    }
    const at = this.#top;
    this.#top += size;
    return at;
  }
}

export class CompactWindows {
  readonly #data: RowData;
  /** Rows by limiter, then by statistics key. */
  readonly #rows = new Map<LimiterStats, Map<string, number>>();
  /** Each window key's row (the store's slots, one to one). */
  readonly #owner = new Map<string, number>();
  /** Every row's key statistics, and where the row is, in the order the rows were made. */
  readonly #keyStats: KeyStats[] = [];
  readonly #at: number[] = [];
  readonly #maxKeys: number;
  // Per request, reused: each window's count before this request, and its rolled state.
  readonly #used: number[] = [];
  readonly #scratch: Scratch[] = [];
  readonly #state: (SlidingCounts | Bucket)[] = [];

  constructor(maxKeys: number, data: RowData = new RowData()) {
    this.#maxKeys = maxKeys;
    this.#data = data;
  }

  /** `client`'s rows found (or made) from its statistics keys and store requests. */
  find(
    c: CompactRoute,
    client: ClientRows & {
      readonly statKeys: readonly string[];
      readonly planned?: readonly WindowRequest[] | undefined;
    },
    stats: readonly LimiterStats[],
  ): void {
    const rows = this.rowsOf(c, client.statKeys, client.planned!, stats);
    client.rows = rows.length > 1 ? rows : undefined;
    client.row0 = rows[0]!;
  }

  /** A client's row on each limiter of the route, found or made (`planned`: its store requests). */
  rowsOf(
    c: CompactRoute,
    statKeys: readonly string[],
    planned: readonly WindowRequest[],
    stats: readonly LimiterStats[],
  ): number[] {
    const rows: number[] = [];
    let i = 0;
    for (let l = 0; l < stats.length; l++) {
      const s = stats[l]!;
      let byKey = this.#rows.get(s);
      if (!byKey) this.#rows.set(s, (byKey = new Map()));
      const key = statKeys[l]!;
      let at = byKey.get(key);
      const made = at === undefined;
      if (at === undefined) {
        at = this.#data.alloc(c.rowSize[l]!);
        byKey.set(key, at);
        // Made where countRequest would make it: at the key's first counted request.
        const k: KeyStats = { requests: 0, refused: 0, peak: 0 };
        s.keys.set(key, k);
        this.#keyStats.push(k);
        this.#at.push(at);
      }
      for (; i < c.end[l]!; i++) {
        const slot = planned[i]!.key;
        const owner = this.#owner.get(slot);
        if (made && owner === undefined) this.#owner.set(slot, at);
        else if (owner !== at) throw new CompactUnfit(`the window key ${slot} has two rows`);
      }
      if (this.#owner.size >= this.#maxKeys)
        throw new CompactUnfit('more window keys than the compact lane holds');
      rows.push(at);
    }
    return rows;
  }

  /** One request: decided (all or nothing), counted, and its statistics. */
  feed(c: CompactRoute, client: ClientRows, route: RouteStats, stats: readonly LimiterStats[], now: number) {
    const d = this.#data.data;
    // A route of one limiter (most are) reads no array: its row is in the client's keys.
    const row0 = client.row0;
    const rows = client.rows;
    const n = c.kind.length;
    let blocked = false;
    for (let i = 0; i < n; i++) {
      const l = c.limiter[i]!;
      const b = (l === 0 ? row0 : rows![l]!) + c.offset[i]!;
      const kind = c.kind[i]!;
      let used: number;
      if (kind === FIXED) used = d[b + 1]! > now ? d[b]! : 0;
      else {
        const sc = this.#scratch[i] ?? (this.#scratch[i] = new Scratch());
        if (kind === SLIDING) {
          sc.window = d[b + 1]!;
          sc.current = d[b + 2]!;
          sc.previous = d[b + 3]!;
          const state = slidingRoll(d[b] ? sc : undefined, now, c.periodMs[i]!);
          this.#state[i] = state;
          used = slidingUsed(state, now, c.periodMs[i]!);
        } else {
          sc.tat = d[b + 1]!;
          sc.frac = d[b + 2]!;
          const state = bucketRoll(d[b] ? sc : undefined, now);
          this.#state[i] = state;
          used = bucketUsed(state, now, c.periodMs[i]!, c.rate[i]!, c.limit[i]!);
        }
      }
      this.#used[i] = used;
      if (!c.shadow[i] && used + 1 > c.limit[i]!) blocked = true;
    }
    let refused = false;
    let shadowRefused = false;
    let spent = false;
    let peak = 0;
    for (let i = 0; i < n; i++) {
      const l = c.limiter[i]!;
      const b = (l === 0 ? row0 : rows![l]!) + c.offset[i]!;
      const used = this.#used[i]!;
      const limit = c.limit[i]!;
      const allowed = used + 1 <= limit;
      let count: number;
      const kind = c.kind[i]!;
      if (kind === FIXED) {
        const live = d[b + 1]! > now;
        if (!blocked) {
          if (!live) {
            d[b] = 0;
            d[b + 1] = now + c.periodMs[i]!;
          }
          d[b]!++;
        }
        count = !blocked || live ? d[b]! : 0;
      } else {
        count = blocked ? used : used + 1;
        if (!blocked) {
          d[b] = 1;
          if (kind === SLIDING) {
            const state = this.#state[i] as SlidingCounts;
            d[b + 1] = state.window;
            d[b + 2] = state.current + 1;
            d[b + 3] = state.previous;
          } else {
            const spentNow = bucketSpend(this.#state[i] as Bucket, c.periodMs[i]!, c.rate[i]!, 1);
            d[b + 1] = spentNow.tat;
            d[b + 2] = spentNow.frac;
          }
        }
      }
      // verdict.ts and countRequest (stats.ts), window by window.
      if (!allowed) {
        if (c.shadow[i]) shadowRefused = true;
        else refused = true;
        spent = true;
      } else if (count / limit > peak) peak = count / limit;
      if (i + 1 === c.end[l]) {
        const s = stats[l]!;
        const r = l === 0 ? row0 : rows![l]!;
        s.requests++;
        d[r]!++;
        if (spent) {
          s.refused++;
          d[r + 1]!++;
        } else if (peak > d[r + 2]!) d[r + 2] = peak;
        spent = false;
        peak = 0;
      }
    }
    if (refused) route.refused++;
    else if (shadowRefused) route.shadowRefused++;
  }

  /** The rows' statistics copied into their key statistics (what the report reads). */
  settle(): void {
    const d = this.#data.data;
    for (let j = 0; j < this.#keyStats.length; j++) {
      const k = this.#keyStats[j]!;
      const at = this.#at[j]!;
      k.requests = d[at]!;
      k.refused = d[at + 1]!;
      k.peak = d[at + 2]!;
    }
  }
}
