// The batching store's bound on batches in flight (maxInFlight), against an inner store that answers
// when the test says: a batch due while one is out waits, open to the next turns' hits, and goes at
// the end of the turn that answers or fails the one out; an idle store sends at the turn's end.
import { describe, expect, test, vi } from 'vitest';
import { BatchingStore, type BatchWindowStore, type SettleRequest } from '../../src/store/batching-store.js';
import type { WindowResult } from '../../src/store/window-store.js';
import { allowedAt, tenAMinute } from '../helpers/batch-requests.js';
import { withFakeTimers } from '../helpers/fake-timers.js';

const window = tenAMinute;
const result = allowedAt;

/** An inner store that records each batch's keys and keeps its settle for the test to answer. */
function held(onBatch: (keys: string[]) => void = () => {}) {
  const batches: string[][] = [];
  const pending: { size: number; settle: SettleRequest }[] = [];
  const inner: BatchWindowStore = {
    hitBatch(batch, settle) {
      const keys = batch.map((windows) => windows[0]!.key);
      batches.push(keys);
      pending.push({ size: batch.length, settle });
      onBatch(keys);
    },
    connect: async () => true,
    readiness: async () => ({ ready: true }),
    close: async () => undefined,
  };
  /** Answers the oldest batch out: each request its position in the batch, from 1. */
  const answer = () => {
    const { size, settle } = pending.shift()!;
    for (let i = 0; i < size; i++) settle(i, [result(i + 1)]);
  };
  return { inner, batches, answer };
}

const turn = () => new Promise<void>((r) => setImmediate(r));
const count = (p: Promise<WindowResult[]>) =>
  p.then(
    (r) => r[0]!.count,
    (err: Error) => err.message,
  );

describe('BatchingStore maxInFlight', () => {
  test('the turns of a round trip share the next call, sent at the end of the turn that answers', async () => {
    const { inner, batches, answer } = held();
    const store = new BatchingStore(inner, { timeoutMs: 10_000, maxInFlight: 1 });
    const a = count(store.hit([window('a')]));
    await turn();
    expect(batches).toEqual([['a']]); // idle: at the end of its turn
    const rest: Promise<number | string>[] = [];
    for (const k of ['b', 'c', 'd']) {
      rest.push(count(store.hit([window(k)])));
      await turn();
    }
    expect(batches).toEqual([['a']]);
    answer();
    expect(await a).toBe(1);
    await turn();
    expect(batches).toEqual([['a'], ['b', 'c', 'd']]);
    answer();
    expect(await Promise.all(rest)).toEqual([1, 2, 3]);
    // Idle again: the next hit goes at the end of its own turn.
    const e = count(store.hit([window('e')]));
    await turn();
    expect(batches).toEqual([['a'], ['b', 'c', 'd'], ['e']]);
    answer();
    expect(await e).toBe(1);
  });

  // setTimeout and performance.now() faked: the deadlines fall when the test says; turns stay real.
  const withFakeClock = (body: () => Promise<void>) =>
    withFakeTimers(['setTimeout', 'clearTimeout', 'performance'], body);

  // A stalled store: the batch waiting behind the call it did not answer fails with that call, so
  // no request waits longer than the timeout; the next batch goes at once.
  test('a batch in flight that fails at its deadline fails the batch waiting behind it', () =>
    withFakeClock(async () => {
      const { inner, batches, answer } = held();
      const store = new BatchingStore(inner, { timeoutMs: 50, maxInFlight: 1 });
      const a = count(store.hit([window('a')]));
      await turn();
      vi.advanceTimersByTime(25);
      let failedAt: number | undefined;
      const b = count(store.hit([window('b')])).then((outcome) => {
        failedAt = performance.now();
        return outcome;
      });
      await turn();
      expect(batches).toEqual([['a']]);
      vi.advanceTimersByTime(25);
      expect(await a).toBe('no reply within 50ms');
      expect(await b).toBe('no reply within 50ms');
      expect(failedAt).toBe(50); // with the call ahead: 25 ms after it was due
      expect(batches).toEqual([['a']]); // never written
      const c = count(store.hit([window('c')]));
      await turn();
      expect(batches).toEqual([['a'], ['c']]); // nothing answered is held against it
      answer(); // a's late answer, ignored
      answer();
      expect(await c).toBe(1);
    }));

  // A slow but healthy store (each call answered within the timeout, but in more than half of it):
  // a batch that waited behind a call still has the whole timeout once written.
  test('a batch written after a wait has the whole timeout', () =>
    withFakeClock(async () => {
      const { inner, batches, answer } = held();
      const store = new BatchingStore(inner, { timeoutMs: 50, maxInFlight: 1 });
      const a = count(store.hit([window('a')]));
      await turn();
      vi.advanceTimersByTime(10);
      const b = count(store.hit([window('b')]));
      await turn();
      vi.advanceTimersByTime(30);
      answer();
      expect(await a).toBe(1);
      await turn();
      expect(batches).toEqual([['a'], ['b']]); // written at 40, due at 10
      vi.advanceTimersByTime(45); // 75: past 10 + 50, within 40 + 50
      await turn();
      answer();
      expect(await b).toBe(1);
    }));

  test('a call that throws fails its batch and leaves none in flight', async () => {
    let calls = 0;
    const { inner, batches, answer } = held(() => {
      if (calls++ === 0) throw new Error('broken pipe');
    });
    const store = new BatchingStore(inner, { timeoutMs: 10_000, maxInFlight: 1 });
    expect(await count(store.hit([window('a')]))).toBe('store: broken pipe');
    const b = count(store.hit([window('b')]));
    await turn();
    expect(batches).toEqual([['a'], ['b']]);
    answer(); // the first batch's settle, already failed: ignored
    answer();
    expect(await b).toBe(1);
  });

  test('two in flight: the third turn waits for either', async () => {
    const { inner, batches, answer } = held();
    const store = new BatchingStore(inner, { timeoutMs: 10_000, maxInFlight: 2 });
    const answers: Promise<number | string>[] = [];
    for (const k of ['a', 'b', 'c', 'd']) {
      answers.push(count(store.hit([window(k)])));
      await turn();
    }
    expect(batches).toEqual([['a'], ['b']]);
    answer();
    await turn();
    expect(batches).toEqual([['a'], ['b'], ['c', 'd']]);
    answer();
    answer();
    expect(await Promise.all(answers)).toEqual([1, 1, 1, 2]);
  });

  test('without the bound, each turn sends its own batch while others are out', async () => {
    const { inner, batches, answer } = held();
    const store = new BatchingStore(inner, { timeoutMs: 10_000 });
    const answers: Promise<number | string>[] = [];
    for (const k of ['a', 'b', 'c']) {
      answers.push(count(store.hit([window(k)])));
      await turn();
    }
    expect(batches).toEqual([['a'], ['b'], ['c']]);
    for (let i = 0; i < 3; i++) answer();
    expect(await Promise.all(answers)).toEqual([1, 1, 1]);
  });
});
