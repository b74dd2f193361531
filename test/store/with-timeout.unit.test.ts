// The one timeout helper of the store's side calls and `tollgate explain`'s reads: work's outcome,
// or the timeout's error; its timer never outlives the work, and a late failure is never unhandled.
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { withTimeout } from '../../src/store/with-timeout.js';

describe('withTimeout', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }));
  afterEach(() => vi.useRealTimers());

  const late = () => new Error('no reply within 100ms');

  test('the work settles first: its value or its error, and no timer is left', async () => {
    await expect(withTimeout(Promise.resolve(7), 100, late)).resolves.toBe(7);
    await expect(withTimeout(Promise.reject(new Error('refused')), 100, late)).rejects.toThrow('refused');
    expect(vi.getTimerCount()).toBe(0);
  });

  test("the timeout comes first: the timeout's error; the work failing later is handled", async () => {
    let fail!: (err: Error) => void;
    const work = new Promise<number>((_, reject) => (fail = reject));
    const bounded = withTimeout(work, 100, late);
    const outcome = expect(bounded).rejects.toThrow('no reply within 100ms');
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(100);
    await outcome;
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      fail(new Error('too late'));
      await work.catch(() => undefined);
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });
});
