import { describe, expect, test } from 'vitest';
import type { RateLimitHeaders } from '../../src/headers.js';
import { freshState, learn, RateLimitDeadlineError, SharedLimits, verdict } from '../../src/limiter-state.js';
import { ManualClock } from '../helpers/clocks.js';

const T0 = 1_800_000_000_000;
const answer = (
  remaining: number | undefined,
  resetAtMs: number | undefined,
  retryAfterMs?: number,
): RateLimitHeaders => ({
  limit: 30,
  remaining,
  resetAtMs,
  retryAfterMs,
});

describe('verdict and learn (the pure rules)', () => {
  test('unknown budget: one request goes alone, the others wait for its answer', () => {
    const s = freshState();
    expect(verdict(s, T0, 0)).toEqual({ kind: 'send' });
    s.inFlight = 1;
    expect(verdict(s, T0, 0)).toEqual({ kind: 'await-answer' });
  });

  test('known budget: send while more than the threshold remains after those in flight, then pause until reset', () => {
    const s = freshState();
    learn(s, 200, answer(3, T0 + 60_000), T0);
    expect(verdict(s, T0, 0)).toEqual({ kind: 'send' });
    s.inFlight = 2;
    expect(verdict(s, T0, 0)).toEqual({ kind: 'send' });
    s.inFlight = 3;
    expect(verdict(s, T0, 0)).toEqual({ kind: 'await-answer' });
    s.inFlight = 0;
    learn(s, 200, answer(0, T0 + 60_000), T0);
    expect(verdict(s, T0, 0)).toEqual({ kind: 'sleep', untilMs: T0 + 60_000, reason: 'remaining' });
    // A threshold of 2 pauses two requests earlier.
    const t = freshState();
    learn(t, 200, answer(2, T0 + 60_000), T0);
    expect(verdict(t, T0, 2)).toEqual({ kind: 'sleep', untilMs: T0 + 60_000, reason: 'remaining' });
    expect(verdict(t, T0, 1)).toEqual({ kind: 'send' });
  });

  test('after the reset the budget is unknown again: one probe goes', () => {
    const s = freshState();
    learn(s, 200, answer(0, T0 + 60_000), T0);
    expect(verdict(s, T0 + 60_000, 0)).toEqual({ kind: 'send' });
  });

  test('answers of one window arriving out of order: the lowest Remaining wins', () => {
    const s = freshState();
    learn(s, 200, answer(5, T0 + 60_000), T0);
    learn(s, 200, answer(9, T0 + 61_000), T0); // sent earlier, answered later; reset rounded 1 s up
    expect([s.remaining, s.resetAtMs]).toEqual([5, T0 + 61_000]);
  });

  test("an earlier window's late answer tells nothing about the current one", () => {
    const s = freshState();
    learn(s, 200, answer(28, T0 + 120_000), T0 + 60_500);
    learn(s, 200, answer(0, T0 + 60_000), T0 + 60_500);
    expect([s.remaining, s.resetAtMs]).toEqual([28, T0 + 120_000]);
  });

  test('a 429 pauses the key for Retry-After, else until the reset', () => {
    const s = freshState();
    learn(s, 429, answer(0, T0 + 60_000, 60_000), T0);
    expect(verdict(s, T0 + 59_999, 0)).toEqual({
      kind: 'sleep',
      untilMs: T0 + 60_000,
      reason: 'retry-after',
    });
    const t = freshState();
    learn(t, 429, answer(undefined, T0 + 3_600_000), T0);
    expect(t.pausedUntilMs).toBe(T0 + 3_600_000);
    const u = freshState();
    learn(u, 429, answer(undefined, undefined), T0);
    expect(u.pausedUntilMs).toBe(0);
  });

  test('a surface without rate-limit headers is unmetered until a response carries them again', () => {
    const s = freshState();
    learn(s, 200, answer(undefined, undefined), T0);
    s.inFlight = 50;
    expect(verdict(s, T0, 0)).toEqual({ kind: 'send' });
    learn(s, 200, answer(0, T0 + 1000), T0);
    expect(verdict(s, T0, 0)).toEqual({ kind: 'await-answer' });
  });
});

describe('SharedLimits', () => {
  test('a pause until reset sleeps on the clock, reports it, and lets the probe go after', async () => {
    const clock = new ManualClock(T0);
    const limits = new SharedLimits({ clock });
    const waits: unknown[] = [];
    await limits.acquire('k');
    limits.settle('k', 200, answer(0, T0 + 3_600_000));
    let sent = false;
    const next = limits.acquire('k', { onWait: (e) => waits.push(e) }).then(() => (sent = true));
    await Promise.resolve();
    expect(clock.sleeping).toEqual([T0 + 3_600_000]);
    await clock.advance(3_599_999);
    expect(sent).toBe(false);
    await clock.advance(1);
    await next;
    expect(waits).toEqual([{ key: 'k', reason: 'remaining', ms: 3_600_000, untilMs: T0 + 3_600_000 }]);
    expect(limits.state('k')).toMatchObject({ inFlight: 1 });
  });

  test('calls waiting for the probe go when its answer comes, as many as the budget allows', async () => {
    const clock = new ManualClock(T0);
    const limits = new SharedLimits({ clock });
    await limits.acquire('k');
    const order: number[] = [];
    const waiting = [1, 2, 3].map((i) => limits.acquire('k').then(() => order.push(i)));
    await Promise.resolve();
    expect(order).toEqual([]);
    limits.settle('k', 200, answer(2, T0 + 60_000));
    await Promise.all(waiting.slice(0, 2));
    expect(order).toEqual([1, 2]);
    expect(limits.state('k')).toMatchObject({ inFlight: 2, remaining: 2 });
    limits.settle('k', 200, answer(1, T0 + 60_000));
    limits.settle('k', 200, answer(0, T0 + 60_000));
    await Promise.resolve();
    await Promise.resolve();
    expect(clock.sleeping).toEqual([T0 + 60_000]);
    await clock.advance(60_000);
    await waiting[2];
    expect(order).toEqual([1, 2, 3]);
  });

  test('keys are independent', async () => {
    const clock = new ManualClock(T0);
    const limits = new SharedLimits({ clock });
    await limits.acquire('a');
    limits.settle('a', 200, answer(0, T0 + 60_000));
    await limits.acquire('b');
    expect(limits.state('b')).toMatchObject({ inFlight: 1 });
  });

  test('a wait past the deadline throws at once, without waiting', async () => {
    const clock = new ManualClock(T0);
    const limits = new SharedLimits({ clock });
    await limits.acquire('k');
    limits.settle('k', 200, answer(0, T0 + 60_000));
    const err = await limits.acquire('k', { deadlineMs: T0 + 59_999 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitDeadlineError);
    expect(err).toMatchObject({ key: 'k', untilMs: T0 + 60_000, deadlineMs: T0 + 59_999 });
    expect(clock.sleeping).toEqual([]);
  });

  test('an abort ends a wait on the clock and a wait for an answer', async () => {
    const clock = new ManualClock(T0);
    const limits = new SharedLimits({ clock });
    await limits.acquire('k');
    const forAnswer = new AbortController();
    const waitingAnswer = limits.acquire('k', { signal: forAnswer.signal });
    forAnswer.abort(new Error('gone'));
    await expect(waitingAnswer).rejects.toThrow('gone');
    limits.settle('k', 200, answer(0, T0 + 60_000));
    const forClock = new AbortController();
    const waitingClock = limits.acquire('k', { signal: forClock.signal });
    await Promise.resolve();
    expect(clock.sleeping).toEqual([T0 + 60_000]);
    forClock.abort();
    await expect(waitingClock).rejects.toMatchObject({ name: 'AbortError' });
    expect(clock.sleeping).toEqual([]);
    expect(limits.state('k')).toMatchObject({ inFlight: 0 });
  });
});
