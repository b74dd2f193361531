// The batching store's settle contract, against scripted inner stores (no Redis): every request is
// answered exactly once, whatever the inner store does with its callback (answers out of order,
// twice, never, or throws after answering some), and the observer hears of each request once.
import { describe, expect, test } from 'vitest';
import { BatchingStore, type BatchWindowStore, type SettleRequest } from '../../src/store/batching-store.js';
import {
  StoreUnavailableError,
  type StoreObserver,
  type WindowRequest,
  type WindowResult,
} from '../../src/store/window-store.js';

const window = (key: string): WindowRequest => ({
  key,
  limit: 10,
  periodMs: 60_000,
  enforce: true,
  cacheWhenSpent: false,
});
const result = (count: number): WindowResult => ({ count, limit: 10, resetAtMs: 1, allowed: true });

/** An inner store whose hitBatch is the test's script; it records each batch's first keys. */
function scripted(script: (batch: readonly (readonly WindowRequest[])[], settle: SettleRequest) => void) {
  const batches: string[][] = [];
  const inner: BatchWindowStore = {
    hitBatch(batch, settle) {
      batches.push(batch.map((windows) => windows[0]!.key));
      script(batch, settle);
    },
    connect: async () => true,
    readiness: async () => ({ ready: true }),
    close: async () => undefined,
  };
  return { inner, batches };
}

function counting(): StoreObserver & { trips: number; errors: number } {
  return {
    trips: 0,
    errors: 0,
    storeRoundTrip() {
      this.trips++;
    },
    storeError() {
      this.errors++;
    },
  };
}

const outcome = (p: Promise<WindowResult[]>) =>
  p.then(
    (r) => r[0]!.count,
    (err: Error) => err,
  );

describe('BatchingStore settle', () => {
  test('answers out of order reach their own requests; a second answer is ignored', async () => {
    const { inner, batches } = scripted((batch, settle) => {
      queueMicrotask(() => {
        for (let i = batch.length - 1; i >= 0; i--) settle(i, [result(i + 1)]);
        settle(0, new Error('late'));
        settle(1, [result(99)]);
      });
    });
    const observer = counting();
    const store = new BatchingStore(inner, { timeoutMs: 10_000, observer });
    const answers = await Promise.all(['a', 'b', 'c'].map((k) => outcome(store.hit([window(k)]))));
    expect(batches).toEqual([['a', 'b', 'c']]);
    expect(answers).toEqual([1, 2, 3]);
    expect(observer).toMatchObject({ trips: 3, errors: 0 });
  });

  test('answers in arrival order resolve the callers in arrival order', async () => {
    const { inner } = scripted((batch, settle) =>
      queueMicrotask(() => batch.forEach((_, i) => settle(i, [result(i + 1)]))),
    );
    const store = new BatchingStore(inner, { timeoutMs: 10_000 });
    const seen: string[] = [];
    await Promise.all(['a', 'b', 'c', 'd'].map((k) => store.hit([window(k)]).then(() => seen.push(k))));
    expect(seen).toEqual(['a', 'b', 'c', 'd']);
  });

  test('an error for one request fails that one only, as StoreUnavailableError', async () => {
    const { inner } = scripted((_, settle) =>
      queueMicrotask(() => {
        settle(0, [result(1)]);
        settle(1, new Error('slot down'));
      }),
    );
    const observer = counting();
    const store = new BatchingStore(inner, { timeoutMs: 10_000, observer });
    const [ok, failed] = await Promise.all([
      outcome(store.hit([window('a')])),
      outcome(store.hit([window('b')])),
    ]);
    expect(ok).toBe(1);
    expect(failed).toBeInstanceOf(StoreUnavailableError);
    expect((failed as Error).message).toBe('store: slot down');
    expect(observer).toMatchObject({ trips: 2, errors: 1 });
  });

  test('a throw after answering some fails the rest, and the answered keep their answer', async () => {
    const { inner } = scripted((_, settle) => {
      settle(0, [result(1)]);
      throw new Error('broken pipe');
    });
    const store = new BatchingStore(inner, { timeoutMs: 10_000 });
    const answers = await Promise.all(['a', 'b'].map((k) => outcome(store.hit([window(k)]))));
    expect(answers[0]).toBe(1);
    expect(answers[1]).toBeInstanceOf(StoreUnavailableError);
    expect((answers[1] as Error).message).toBe('store: broken pipe');
  });

  test('a request never answered fails at the deadline; an answer after it is ignored', async () => {
    let late: (() => void) | undefined;
    const { inner } = scripted((_, settle) => {
      settle(0, [result(1)]);
      late = () => settle(1, [result(2)]);
    });
    const observer = counting();
    const store = new BatchingStore(inner, { timeoutMs: 50, observer });
    const answers = await Promise.all(['a', 'b'].map((k) => outcome(store.hit([window(k)]))));
    expect(answers[0]).toBe(1);
    expect((answers[1] as Error).message).toBe('no reply within 50ms');
    late!();
    expect(observer).toMatchObject({ trips: 2, errors: 1 });
  });

  test('a request without windows is answered at once, without the inner store', async () => {
    const { inner, batches } = scripted(() => {
      throw new Error('not called');
    });
    const store = new BatchingStore(inner, { timeoutMs: 10_000 });
    expect(await store.hit([])).toEqual([]);
    expect(batches).toEqual([]);
  });
});
