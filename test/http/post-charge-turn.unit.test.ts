// The post-charges of a turn ride in the same store call as the turn's admission checks: the
// charge batch is gathered at the end of the turn before the store's batch is sent (turn-end.ts).
import { describe, expect, test } from 'vitest';
import { ChargeBatch, type Pending } from '../../src/http/post-charge.js';
import type { RoutedContext } from '../../src/http/context.js';
import type { CompiledLimiter, RouteWindow } from '../../src/rules/model.js';
import { BatchingStore, type BatchWindowStore } from '../../src/store/batching-store.js';
import { atTurnEnd } from '../../src/store/turn-end.js';
import type { WindowRequest } from '../../src/store/window-store.js';

/** A batch store answering every window allowed, recording each call's requests as "key:cost". */
function recording() {
  const calls: string[][] = [];
  const inner: BatchWindowStore = {
    hitBatch(batch, settle) {
      calls.push(batch.flatMap((windows) => windows.map((w) => `${w.key}:${w.cost ?? 1}`)));
      queueMicrotask(() =>
        batch.forEach((windows, i) =>
          settle(
            i,
            windows.map((w) => ({ count: w.cost ?? 1, limit: w.limit, resetAtMs: 1, allowed: true })),
          ),
        ),
      );
    },
    connect: async () => true,
    readiness: async () => ({ ready: true }),
    close: async () => undefined,
  };
  return { store: new BatchingStore(inner, { timeoutMs: 60_000 }), calls };
}

const limiter = { name: 'tokens', shadow: false } as CompiledLimiter;
const routeWindow = { limiter, index: 0 } as RouteWindow;
const planned = (key: string): WindowRequest => ({
  key,
  limit: 100,
  periodMs: 60_000,
  enforce: true,
  cacheWhenSpent: true,
});

function pending(key: string, cost: number): Pending {
  const r = {
    requestId: 'r',
    limiting: { metrics: { admittedOverLimit: () => undefined }, warnStore: () => undefined },
  } as unknown as RoutedContext;
  return { r, deferred: { windows: [routeWindow], planned: [planned(key)], costs: [1] }, charges: [cost] };
}

const turn = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

describe('post-charges and the store batch of a turn', () => {
  test('charges added in a turn join the admission checks of that turn: one store call', async () => {
    const { store, calls } = recording();
    const charges = new ChargeBatch(store);
    const checked = store.hit([planned('a')]);
    charges.add(pending('b', 3));
    charges.add(pending('b', 2));
    const checkedToo = store.hit([planned('c')]);
    await Promise.all([checked, checkedToo]);
    await turn();
    expect(calls).toEqual([['a:1', 'c:1', 'b:5']]);
  });

  test('charges in a turn without admissions go alone; a later turn makes a call of its own', async () => {
    const { store, calls } = recording();
    const charges = new ChargeBatch(store);
    charges.add(pending('k', 1));
    await turn();
    charges.add(pending('k', 4));
    await store.hit([planned('x')]);
    await turn();
    expect(calls).toEqual([['k:1'], ['x:1', 'k:4']]);
  });
});

describe('atTurnEnd', () => {
  test('gather work runs before send work, whatever the order they were queued in', async () => {
    const ran: string[] = [];
    atTurnEnd('send', () => ran.push('send 1'));
    atTurnEnd('gather', () => {
      ran.push('gather');
      atTurnEnd('send', () => ran.push('send queued by gather'));
    });
    atTurnEnd('send', () => ran.push('send 2'));
    await turn();
    expect(ran).toEqual(['gather', 'send 1', 'send 2', 'send queued by gather']);
  });

  test('work queued while the send round runs waits for the next turn', async () => {
    const ran: string[] = [];
    atTurnEnd('send', () => {
      ran.push('first');
      // Queued first, so it runs first in the next turn: had the work joined this round, it would not.
      setImmediate(() => ran.push('an immediate queued meanwhile'));
      atTurnEnd('send', () => ran.push('next turn'));
    });
    await turn();
    await turn();
    expect(ran).toEqual(['first', 'an immediate queued meanwhile', 'next turn']);
  });
});
