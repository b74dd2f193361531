// The undici interceptor (@tollgate/client/undici) through undici's request(), against the real
// gateway and Redis: the same rules as the fetch client, for Node code that stays on undici.
import { Agent, request } from 'undici';
import { afterEach, expect } from 'vitest';
import { test } from '../../test/helpers/fixtures.js';
import { waitFor } from '../../test/helpers/wait.js';
import type { RateLimitedEvent } from '../src/index.js';
import { SharedLimits, type WaitEvent } from '../src/limiter-state.js';
import { tollgateRateLimit } from '../src/undici.js';
import { HoldingClock } from './helpers/clocks.js';
import { startWindowsGateway, spendMinuteWindow } from './helpers/windows.js';
import { fakeWorld, realWorld, T0 } from './helpers/world.js';

afterEach(realWorld);

test('a burst of 75 POSTs through request(): all 200, 30 per window, no 429', async ({
  redis,
  redisClient,
  upstream,
  gateways,
}) => {
  const clock = await fakeWorld(redisClient);
  const gateway = await startWindowsGateway({ redis, upstream, gateways });
  const rateLimited: RateLimitedEvent[] = [];
  const agent = new Agent();
  const dispatcher = agent.compose(tollgateRateLimit({ clock, onRateLimited: (e) => rateLimited.push(e) }));
  try {
    const before = upstream.seen.length;
    const replies = await Promise.all(
      Array.from({ length: 75 }, async (_, i) => {
        const res = await request(`${gateway.url()}/minute/burst`, {
          method: 'POST',
          body: `n=${i}`,
          dispatcher,
        });
        const echo = (await res.body.json()) as { body: string };
        return { status: res.statusCode, reset: res.headers['x-ratelimit-reset'], body: echo.body };
      }),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(75).fill(200));
    expect(new Set(replies.map((r) => r.body)).size).toBe(75);
    expect(rateLimited).toEqual([]);
    expect(upstream.seen.length - before).toBe(75);
    const perWindow = new Map<string, number>();
    for (const r of replies) perWindow.set(String(r.reset), (perWindow.get(String(r.reset)) ?? 0) + 1);
    expect([...perWindow]).toEqual([
      [String((T0 + 60_000) / 1000), 30],
      [String((T0 + 120_000) / 1000), 30],
      [String((T0 + 180_000) / 1000), 15],
    ]);
  } finally {
    await agent.close();
  }
});

test('a 429 is held back, waited out in full (Retry-After 60) and sent again: the caller sees the 200', async ({
  redis,
  redisClient,
  upstream,
  gateways,
}) => {
  const clock = await fakeWorld(redisClient);
  const gateway = await startWindowsGateway({ redis, upstream, gateways });
  await spendMinuteWindow(gateway.url(), '/minute/spent');
  const rateLimited: RateLimitedEvent[] = [];
  const waits: WaitEvent[] = [];
  const agent = new Agent();
  const dispatcher = agent.compose(
    tollgateRateLimit({ clock, onRateLimited: (e) => rateLimited.push(e), onWait: (e) => waits.push(e) }),
  );
  try {
    const res = await request(`${gateway.url()}/minute/spent`, {
      method: 'PUT',
      headers: { 'content-type': 'text/plain' },
      body: 'again',
      dispatcher,
    });
    expect(res.statusCode).toBe(200);
    expect(((await res.body.json()) as { method: string; body: string }).body).toBe('again');
    expect(rateLimited.map((e) => [e.attempt, e.delayMs, e.willRetry, e.headers.remaining])).toEqual([
      [1, 60_000, true, 0],
    ]);
    expect(waits.map((w) => [w.reason, w.ms])).toEqual([['retry-after', 60_000]]);
    expect(Date.now()).toBe(T0 + 60_000);
  } finally {
    await agent.close();
  }
});

test('retries spent: the last 429 reaches the caller as it came', async ({
  redis,
  redisClient,
  upstream,
  gateways,
}) => {
  await fakeWorld(redisClient);
  const gateway = await startWindowsGateway({ redis, upstream, gateways });
  await spendMinuteWindow(gateway.url(), '/minute/spent');
  const agent = new Agent();
  const dispatcher = agent.compose(tollgateRateLimit({ maxRetries: 0 }));
  try {
    const res = await request(`${gateway.url()}/minute/spent`, { dispatcher });
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('60');
    expect(await res.body.json()).toEqual({
      error: { code: 'rate_limited', message: expect.any(String) as string },
    });
  } finally {
    await agent.close();
  }
});

test("an abort during the wait rejects request() with the signal's reason", async ({
  redis,
  redisClient,
  upstream,
  gateways,
}) => {
  await redisClient.flushall();
  const gateway = await startWindowsGateway({ redis, upstream, gateways });
  await spendMinuteWindow(gateway.url(), '/minute/abort');
  const clock = new HoldingClock();
  const limits = new SharedLimits({ clock });
  const agent = new Agent();
  const dispatcher = agent.compose(tollgateRateLimit({ limits }));
  try {
    const seenBefore = upstream.seen.length;
    const controller = new AbortController();
    const call = request(`${gateway.url()}/minute/abort`, {
      method: 'POST',
      body: 'x',
      dispatcher,
      signal: controller.signal,
    });
    await waitFor(
      () => clock.sleeps.length,
      (n) => n === 1,
      { what: 'the interceptor to wait' },
    );
    const reason = new Error('user gave up');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    expect(upstream.seen.length).toBe(seenBefore);
    expect(limits.state(new URL(gateway.url()).origin)).toMatchObject({ inFlight: 0, remaining: 0 });
  } finally {
    await agent.close();
  }
});
