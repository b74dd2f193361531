// The post-charges of one event-loop turn go to the store together: one request per window key,
// the costs summed in arrival order; an overshoot is still audited request by request.
import { describe, expect, test } from 'vitest';
import { ChargeBatch, type Pending } from '../../src/http/post-charge.js';
import type { RoutedContext } from '../../src/http/context.js';
import type { CompiledLimiter, RouteWindow } from '../../src/rules/model.js';
import type { WindowRequest, WindowResult, WindowStore } from '../../src/store/window-store.js';

/** A store that counts like one window per key, with no refusal (post-charges never refuse). */
function countingStore() {
  const counts = new Map<string, number>();
  const calls: WindowRequest[][] = [];
  const store = {
    hit(requests: readonly WindowRequest[]): Promise<WindowResult[]> {
      calls.push([...requests]);
      return Promise.resolve(
        requests.map((r) => {
          const before = counts.get(r.key) ?? 0;
          const cost = r.cost ?? 1;
          counts.set(r.key, before + cost);
          return { count: before + cost, limit: r.limit, resetAtMs: 0, allowed: before + cost <= r.limit };
        }),
      );
    },
  } as unknown as WindowStore;
  return { store, calls, counts };
}

const limiter = { name: 'tokens', shadow: false } as CompiledLimiter;
const window = { limiter, index: 0 } as RouteWindow;

function pending(key: string, cost: number, over: string[]): Pending {
  const r = {
    requestId: 'r',
    limiting: {
      metrics: { admittedOverLimit: (name: string) => over.push(name) },
      warnStore: () => undefined,
    },
  } as unknown as RoutedContext;
  const planned: WindowRequest = { key, limit: 10, periodMs: 60_000, enforce: true, cacheWhenSpent: true };
  return { r, deferred: { windows: [window], planned: [planned], costs: [1] }, charges: [cost] };
}

const turn = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

describe('ChargeBatch', () => {
  test('one turn: one store call, one request per key, the costs summed', async () => {
    const { store, calls, counts } = countingStore();
    const over: string[] = [];
    const batch = new ChargeBatch(store);
    for (const [key, cost] of [
      ['a', 3],
      ['b', 2],
      ['a', 3],
      ['a', 3],
    ] as const)
      batch.add(pending(key, cost, over));
    await turn();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.map((r) => [r.key, r.cost, r.enforce, r.cacheWhenSpent])).toEqual([
      ['a', 9, false, false],
      ['b', 2, false, false],
    ]);
    expect([...counts]).toEqual([
      ['a', 9],
      ['b', 2],
    ]);
    expect(over).toEqual([]);
  });

  test('an overshoot is counted once per request that found no room, in arrival order', async () => {
    const { store } = countingStore();
    const over: string[] = [];
    const batch = new ChargeBatch(store);
    // Limit 10: 3, 6, 9 fit; the 4th (12) and the 5th (15) found no room.
    for (let i = 0; i < 5; i++) batch.add(pending('k', 3, over));
    await turn();
    expect(over).toEqual(['tokens', 'tokens']);
    // The next turn's charge on the same key finds it over too.
    batch.add(pending('k', 1, over));
    await turn();
    expect(over).toEqual(['tokens', 'tokens', 'tokens']);
  });
});
