import fc from 'fast-check';
import { expect } from 'vitest';
import type { WindowRequest, WindowStore } from '../../src/store/window-store.js';

// A reference model of fixed windows, and random scenarios to hold a store against it.

const costOf = (w: WindowRequest) => w.cost ?? 1;

/**
 * Reference: counts per key; a request passes when every enforced window has room for its cost
 * (count + cost ≤ limit), then adds its cost everywhere.
 */
export function model(batches: readonly WindowRequest[][]): { allowed: boolean[]; counts: number[][] } {
  const counts = new Map<string, number>();
  const out = { allowed: [] as boolean[], counts: [] as number[][] };
  for (const batch of batches) {
    const blocked = batch.some((w) => w.enforce && (counts.get(w.key) ?? 0) + costOf(w) > w.limit);
    if (!blocked) for (const w of batch) counts.set(w.key, (counts.get(w.key) ?? 0) + costOf(w));
    out.allowed.push(!blocked);
    out.counts.push(batch.map((w) => counts.get(w.key) ?? 0));
  }
  return out;
}

// Windows over a handful of keys with small limits, so limits are reached often. Periods are long:
// no expiry here. The cost is mostly absent (1), sometimes more hits at once (Envoy's hits_addend),
// up to more than the limit.
const windowArb = fc.record(
  {
    key: fc.constantFrom('a', 'b', 'c', 'd'),
    limit: fc.integer({ min: 1, max: 4 }),
    periodMs: fc.constant(600_000),
    enforce: fc.boolean(),
    cacheWhenSpent: fc.constant(false),
    cost: fc.integer({ min: 1, max: 5 }),
  },
  { requiredKeys: ['key', 'limit', 'periodMs', 'enforce', 'cacheWhenSpent'] },
);

/** The store's answers to the batches, in the model's shape. */
export async function replay(store: WindowStore, batches: WindowRequest[][]) {
  const allowed: boolean[] = [];
  const counts: number[][] = [];
  for (const batch of batches) {
    const results = await store.hit(batch);
    const enforcedSpent = results.some((r, i) => batch[i]!.enforce && !r.allowed);
    allowed.push(!enforcedSpent);
    counts.push(results.map((r) => r.count));
    for (const r of results) {
      expect(r.resetAtMs).toBeGreaterThan(Date.now() + 500_000);
    }
  }
  return { allowed, counts };
}

/** Batches of windows (one batch per request) over a handful of keys. */
export const scenario = () => {
  // The same key always carries the same limit within a scenario, as it does in a config.
  return fc
    .array(fc.uniqueArray(windowArb, { minLength: 1, maxLength: 3, selector: (w) => w.key }), {
      minLength: 1,
      maxLength: 25,
    })
    .map((batches) => {
      const limits = new Map<string, number>();
      return batches.map((b) =>
        b.map((w) => {
          if (!limits.has(w.key)) limits.set(w.key, w.limit);
          return { ...w, limit: limits.get(w.key)! };
        }),
      );
    });
};

/** What the reference model says of one window of one request. */
export interface ModelWindow {
  /** Hits in the window after the request (counted or not). */
  readonly count: number;
  /** Whether the window had room before the request. */
  readonly allowed: boolean;
}

/**
 * The same model, one request at a time, with each window's own answer: for batches, whose
 * requests are decided one after the other inside one script run.
 */
export class WindowModel {
  readonly #counts = new Map<string, number>();

  decide(windows: readonly WindowRequest[]): { passed: boolean; windows: ModelWindow[] } {
    const before = windows.map((w) => this.#counts.get(w.key) ?? 0);
    const passed = !windows.some((w, i) => w.enforce && before[i]! + costOf(w) > w.limit);
    if (passed) for (const w of windows) this.#counts.set(w.key, (this.#counts.get(w.key) ?? 0) + costOf(w));
    return {
      passed,
      windows: windows.map((w, i) => ({
        count: this.#counts.get(w.key) ?? 0,
        allowed: before[i]! + costOf(w) <= w.limit,
      })),
    };
  }
}
