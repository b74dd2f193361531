// The batching store's settle contract, against scripted inner stores (no Redis): every request is
// answered exactly once, whatever the inner store does with its callback (answers out of order,
// twice, never, or throws after answering some), and the observer hears of each request once.
import { describe, expect, test, vi } from 'vitest';
import { BatchingStore, type BatchWindowStore, type SettleRequest } from '../../src/store/batching-store.js';
import {
  StoreUnavailableError,
  type StoreObserver,
  type WindowRequest,
  type WindowResult,
} from '../../src/store/window-store.js';
import { allowedAt, tenAMinute } from '../helpers/batch-requests.js';
import { withFakeTimers } from '../helpers/fake-timers.js';

const window = tenAMinute;
const result = allowedAt;

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

  test('batches in flight together share one deadline timer: each unanswered one fails, answered ones keep their answer', async () => {
    let calls = 0;
    const { inner, batches } = scripted((_, settle) => {
      if (calls++ === 1) settle(0, [result(1)]); // only the second batch is answered
    });
    const observer = counting();
    const store = new BatchingStore(inner, { timeoutMs: 50, observer });
    const nextTurn = () => new Promise((resolve) => setTimeout(resolve, 5));
    const a = outcome(store.hit([window('a')]));
    await nextTurn();
    const b = outcome(store.hit([window('b')]));
    await nextTurn();
    const c = outcome(store.hit([window('c')]));
    const answers = await Promise.all([a, b, c]);
    expect(batches).toEqual([['a'], ['b'], ['c']]);
    expect((answers[0] as Error).message).toBe('no reply within 50ms');
    expect(answers[1]).toBe(1);
    expect((answers[2] as Error).message).toBe('no reply within 50ms');
    expect(observer).toMatchObject({ trips: 3, errors: 2 });
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

describe('BatchingStore batch window', () => {
  const turn = () => new Promise<void>((r) => setImmediate(r));
  const answering = () =>
    scripted((batch, settle) => queueMicrotask(() => batch.forEach((_, i) => settle(i, [result(i + 1)]))));

  // Only setTimeout is faked: the window's timer fires when the test says, turns stay real.
  const withFakeTimeouts = (body: () => Promise<void>) =>
    withFakeTimers(['setTimeout', 'clearTimeout'], body);

  test('hits of several turns within the window share one batch, sent when it ends', () =>
    withFakeTimeouts(async () => {
      const { inner, batches } = answering();
      const store = new BatchingStore(inner, { timeoutMs: 10_000, windowMs: 5 });
      const answers: Promise<number | Error>[] = [];
      for (const k of ['a', 'b', 'c']) {
        answers.push(outcome(store.hit([window(k)])));
        await turn();
      }
      expect(batches).toEqual([]);
      vi.advanceTimersByTime(5);
      expect(await Promise.all(answers)).toEqual([1, 2, 3]);
      expect(batches).toEqual([['a', 'b', 'c']]);
    }));

  test('a held batch that fills a script call is sent at the end of its turn; the next hit opens a new one', () =>
    withFakeTimeouts(async () => {
      const { inner, batches } = answering();
      const store = new BatchingStore(inner, { timeoutMs: 10_000, windowMs: 5, maxRequests: 2 });
      const full = [outcome(store.hit([window('a')])), outcome(store.hit([window('b')]))];
      const held = outcome(store.hit([window('c')]));
      expect(await Promise.all(full)).toEqual([1, 2]);
      expect(batches).toEqual([['a', 'b']]);
      vi.advanceTimersByTime(5);
      expect(await held).toBe(1);
      expect(batches).toEqual([['a', 'b'], ['c']]);
    }));

  test('without a window, each turn sends its own batch', async () => {
    const { inner, batches } = answering();
    const store = new BatchingStore(inner, { timeoutMs: 10_000 });
    const first = outcome(store.hit([window('a')]));
    await turn();
    const second = outcome(store.hit([window('b')]));
    expect(await Promise.all([first, second])).toEqual([1, 1]);
    expect(batches).toEqual([['a'], ['b']]);
  });
});
