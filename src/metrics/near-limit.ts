import type { Registry } from 'prom-client';
import { CountingCounter, type CounterCell } from './cells.js';
import { SpaceSaving, type HeavyKey } from './space-saving.js';

/**
 * How close clients are to their limits, live (docs/metrics.md#near-limit): per limiter and window,
 * the fraction of the limit each request's key had used once counted, in four buckets, and the
 * heaviest keys per limiter (a space-saving sketch of their store keys, which hold hashed key parts
 * only). Everything is bounded: LIMITERS_TRACKED limiters, TOP_KEYS keys each, RECENT_REFUSALS
 * refusals. Per request: one WeakMap lookup per window, a few increments, one Map lookup per
 * limiter; nothing allocated once a window's slot exists.
 */

/** The usage buckets, as labelled: used ≤ 50 %, ≤ 80 %, ≤ 100 % of the limit, or refused. */
export const USAGE_BUCKETS = ['0-50', '50-80', '80-100', 'refused'] as const;
export type UsageBucket = (typeof USAGE_BUCKETS)[number];

/** Above this fraction of its limit, an admitted request is near the limit. */
export const NEAR_LIMIT = 0.8;
export const TOP_KEYS = 20;
export const LIMITERS_TRACKED = 200;
export const RECENT_REFUSALS = 50;

/** The index in USAGE_BUCKETS of a window's verdict: `count` hits of `limit` used, or refused. */
export function usageBucket(count: number, limit: number, allowed: boolean): number {
  if (!allowed) return 3;
  // In whole numbers: exact at the boundaries (4 of 5 is 80 %, not a hair over).
  return count * 2 <= limit ? (limit > 0 ? 0 : 2) : count * 5 <= limit * 4 ? 1 : 2;
}

/** What NearLimit reads of a route's window (a RouteWindow: structural, as metrics sits under rules). */
export interface ObservedWindow {
  readonly limiter: { readonly name: string };
  readonly index: number;
  readonly window: { readonly periodMs: number };
}

/** What NearLimit reads of a window's store result. */
export interface ObservedResult {
  readonly count: number;
  readonly limit: number;
  readonly allowed: boolean;
}

export interface RecentRefusal {
  readonly at: string;
  readonly route: string;
  readonly limiter: string;
  readonly decision: string;
  /** The refused window's store key (hashed key parts only); absent for a refusal after counting. */
  readonly key?: string;
}

/** One limiter's window, as the JSON shows it. */
export interface WindowUsage {
  readonly window: string;
  readonly usage: Record<UsageBucket, number>;
  readonly nearLimit: number;
}

interface RefusalSlot {
  atMs: number;
  route: string;
  limiter: string;
  decision: string;
  key: string | undefined;
}

interface WindowSlot {
  readonly limiter: LimiterUsage | undefined;
  readonly first: boolean;
  readonly cells: readonly CounterCell[];
  readonly near: CounterCell;
  /** The same increments, kept here too: prom-client's counters are flushed at each scrape. */
  readonly counts: number[];
  readonly label: string;
}

class LimiterUsage {
  readonly sketch = new SpaceSaving(TOP_KEYS);
  readonly windows = new Map<string, WindowSlot>();
}

export class NearLimit {
  readonly #usage: CountingCounter;
  readonly #near: CountingCounter;
  readonly #slots = new WeakMap<ObservedWindow, WindowSlot>();
  readonly #limiters = new Map<string, LimiterUsage>();
  readonly #refusals: RefusalSlot[] = Array.from({ length: RECENT_REFUSALS }, () => ({
    atMs: 0,
    route: '',
    limiter: '',
    decision: '',
    key: undefined,
  }));
  #nextRefusal = 0;

  constructor(registry: Registry) {
    const registers = [registry];
    this.#usage = new CountingCounter({
      name: 'tollgate_limit_usage_total',
      help: "Requests by the fraction of a window's limit their key had used once counted (bucket 0-50, 50-80, 80-100 %, or refused).",
      labelNames: ['limiter', 'window', 'bucket'],
      registers,
    });
    this.#near = new CountingCounter({
      name: 'tollgate_near_limit_total',
      help: `Requests admitted with their key past ${NEAR_LIMIT * 100} % of a window's limit.`,
      labelNames: ['limiter', 'window'],
      registers,
    });
  }

  /**
   * A request's windows once counted: their usage, the heaviest keys (the first window's key of
   * each limiter), and the refusal of `blockedBy`, if any.
   */
  observe(
    route: string,
    windows: readonly ObservedWindow[],
    keys: readonly { readonly key: string }[],
    results: readonly ObservedResult[],
    blockedBy: { readonly name: string } | undefined,
  ): void {
    for (let i = 0; i < windows.length; i++) {
      const w = windows[i]!;
      const slot = this.#slots.get(w) ?? this.#slot(w);
      const r = results[i]!;
      if (slot.first && slot.limiter) slot.limiter.sketch.offer(keys[i]!.key);
      // Not counted: another window refused the request (or the over-limit cache did, unasked).
      if (r.allowed && r.count === 0) continue;
      const bucket = usageBucket(r.count, r.limit, r.allowed);
      slot.cells[bucket]!.pending++;
      slot.counts[bucket]!++;
      if (bucket === 2) {
        slot.near.pending++;
        slot.counts[4]!++;
      }
      if (!r.allowed && blockedBy === w.limiter) {
        this.refusal(route, blockedBy.name, 'limited', keys[i]!.key);
        blockedBy = undefined; // one entry per request
      }
    }
  }

  /** A refusal into the ring of recent ones (the oldest goes): its slot is reused, nothing allocated. */
  refusal(route: string, limiter: string, decision: string, key?: string): void {
    const slot = this.#refusals[this.#nextRefusal]!;
    slot.atMs = Date.now();
    slot.route = route;
    slot.limiter = limiter;
    slot.decision = decision;
    slot.key = key;
    this.#nextRefusal = (this.#nextRefusal + 1) % RECENT_REFUSALS;
  }

  /** The recent refusals, newest first. */
  recentRefusals(): RecentRefusal[] {
    const out: RecentRefusal[] = [];
    for (let i = 1; i <= RECENT_REFUSALS; i++) {
      const r = this.#refusals[(this.#nextRefusal - i + RECENT_REFUSALS) % RECENT_REFUSALS]!;
      if (r.atMs === 0) break;
      const { route, limiter, decision, key } = r;
      const at = new Date(r.atMs).toISOString();
      out.push(key === undefined ? { at, route, limiter, decision } : { at, route, limiter, decision, key });
    }
    return out;
  }

  /** A limiter's windows (in first-seen order) and heaviest keys; undefined when it was never seen. */
  limiter(name: string): { windows: WindowUsage[]; top: HeavyKey[]; total: number } | undefined {
    const l = this.#limiters.get(name);
    if (!l) return undefined;
    const windows = [...l.windows.values()].map((s) => ({
      window: s.label,
      usage: Object.fromEntries(USAGE_BUCKETS.map((b, i) => [b, s.counts[i]!])) as Record<
        UsageBucket,
        number
      >,
      nearLimit: s.counts[4]!,
    }));
    return { windows, top: l.sketch.top(), total: l.sketch.total };
  }

  /** First sight of a window (of this table): its cells, shared with the same limiter window of other tables. */
  #slot(w: ObservedWindow): WindowSlot {
    const name = w.limiter.name;
    const label = periodLabel(w.window.periodMs);
    let limiter = this.#limiters.get(name);
    if (!limiter && this.#limiters.size < LIMITERS_TRACKED)
      this.#limiters.set(name, (limiter = new LimiterUsage()));
    let slot = limiter?.windows.get(label);
    if (!slot) {
      slot = {
        limiter,
        first: w.index === 0,
        cells: USAGE_BUCKETS.map((bucket) => this.#usage.cell({ limiter: name, window: label, bucket })),
        near: this.#near.cell({ limiter: name, window: label }),
        counts: [0, 0, 0, 0, 0],
        label,
      };
      limiter?.windows.set(label, slot);
    } else if (slot.first !== (w.index === 0)) {
      slot = { ...slot, first: w.index === 0 };
    }
    this.#slots.set(w, slot);
    return slot;
  }
}

const UNITS: readonly [number, string][] = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'm'],
  [1000, 's'],
];

/** A window's label: its period as written (1m, 90s, 1500ms). */
export function periodLabel(ms: number): string {
  for (const [unit, name] of UNITS) if (ms % unit === 0) return `${ms / unit}${name}`;
  return `${ms}ms`;
}
