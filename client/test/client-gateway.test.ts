// @tollgate/client against the real gateway (in process), a real redis-server and the echoing
// upstream: bursts past the shipped 30/min widget-leads limiter, an hour window, aborts. The
// client's waits run on a clock shared with the gateway and Redis (helpers/world.ts), so a minute
// or an hour passes at once, and the windows really reset.
import { afterEach, describe, expect } from 'vitest';
import { test } from '../../test/helpers/fixtures.js';
import { send } from '../../test/helpers/gateway.js';
import { visitorJwt } from '../../test/helpers/tokens.js';
import { waitFor } from '../../test/helpers/wait.js';
import { ApiError, RateLimitedFetch, TollgateClient, type RateLimitedEvent } from '../src/index.js';
import type { WaitEvent } from '../src/limiter-state.js';
import { HoldingClock } from './helpers/clocks.js';
import { startShippedGateway, startWindowsGateway, spendMinuteWindow } from './helpers/windows.js';
import { fakeWorld, realWorld, T0 } from './helpers/world.js';

afterEach(realWorld);

interface Echo {
  readonly method: string;
  readonly url: string;
  readonly body: string;
}

describe('the shipped widget-leads limiter (30/min per visitor JWT)', () => {
  test('a burst of 75 leads: every call succeeds, none sent while the window is spent', async ({
    redis,
    redisClient,
    upstream,
    gateways,
  }) => {
    const clock = await fakeWorld(redisClient);
    const gateway = await startShippedGateway({ redis, upstream, gateways });
    const rateLimited: RateLimitedEvent[] = [];
    const waits: WaitEvent[] = [];
    const sentAt: number[] = [];
    const client = new TollgateClient({
      baseUrl: gateway.url(),
      clock,
      fetch: (input, init) => {
        sentAt.push(Date.now() - T0);
        return fetch(input, init);
      },
      onRateLimited: (e) => rateLimited.push(e),
      onWait: (e) => waits.push(e),
    });
    const visitor = client.widget.withToken(await visitorJwt('burst-session', { expiresIn: '1d' }));
    const before = upstream.seen.length;

    const leads = await Promise.all(
      Array.from({ length: 75 }, (_, i) =>
        visitor.leads({ name: `V${i}`, email: `v${i}@example.com`, consent: true }),
      ),
    );

    // Every call came back 200 from the upstream, which saw each lead once, as a POST with its body.
    const echoes = leads as unknown as Echo[];
    expect(echoes.map((e) => [e.method, e.url])).toEqual(Array(75).fill(['POST', '/api/v1/widget/leads']));
    expect(new Set(echoes.map((e) => JSON.parse(e.body).email)).size).toBe(75);
    expect(upstream.seen.length - before).toBe(75);
    // No 429 at all: the client paused at Remaining 0 until each reset, so it sent exactly 75
    // requests, 30 + 30 + 15 over three windows.
    expect(rateLimited).toEqual([]);
    expect(sentAt).toHaveLength(75);
    const perWindow = [0, 0, 0];
    for (const at of sentAt) perWindow[Math.floor(at / 60_000)]!++;
    expect(perWindow).toEqual([30, 30, 15]);
    // Each wait ran to the window's reset, a whole minute on the shared clock.
    expect(new Set(waits.map((w) => `${w.reason} ${w.untilMs - T0}`))).toEqual(
      new Set(['remaining 60000', 'remaining 120000']),
    );
  });

  test('a window spent by another caller: one 429, Retry-After 60 waited in full, then success', async ({
    redis,
    redisClient,
    upstream,
    gateways,
  }) => {
    const clock = await fakeWorld(redisClient);
    const gateway = await startShippedGateway({ redis, upstream, gateways });
    const jwt = await visitorJwt('shared-session', { expiresIn: '1d' });
    for (let i = 0; i < 30; i++) {
      const r = await send(`${gateway.url()}/api/v1/widget/leads`, {
        method: 'POST',
        headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(r.status).toBe(200);
    }
    const rateLimited: RateLimitedEvent[] = [];
    const waits: WaitEvent[] = [];
    const client = new TollgateClient({
      baseUrl: gateway.url(),
      visitorToken: jwt,
      clock,
      onRateLimited: (e) => rateLimited.push(e),
      onWait: (e) => waits.push(e),
    });
    const echo = (await client.widget.leads({
      name: 'Late',
      email: 'late@example.com',
      consent: true,
    })) as unknown as Echo;
    expect(JSON.parse(echo.body)).toEqual({ name: 'Late', email: 'late@example.com', consent: true });
    expect(rateLimited).toEqual([
      {
        key: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+ \w+$/) as string,
        method: 'POST',
        url: `${gateway.url()}/api/v1/widget/leads`,
        attempt: 1,
        headers: { limit: 30, remaining: 0, resetAtMs: T0 + 60_000, retryAfterMs: 60_000 },
        delayMs: 60_000,
        willRetry: true,
      },
    ]);
    expect(waits.map((w) => [w.reason, w.ms])).toEqual([['retry-after', 60_000]]);
    expect(Date.now()).toBe(T0 + 60_000);
  });
});

describe('windows of this file (30/min and 30/hour per IP)', () => {
  test('an hour window is waited out: the 31st call goes at the reset, an hour later', async ({
    redis,
    redisClient,
    upstream,
    gateways,
  }) => {
    const clock = await fakeWorld(redisClient);
    const gateway = await startWindowsGateway({ redis, upstream, gateways });
    const waits: WaitEvent[] = [];
    const http = new RateLimitedFetch({ clock, onWait: (e) => waits.push(e) });
    const statuses: number[] = [];
    const resets: string[] = [];
    for (let i = 0; i < 31; i++) {
      const res = await http.fetch(`${gateway.url()}/hour/x`, { method: 'DELETE' });
      statuses.push(res.status);
      resets.push(res.headers.get('x-ratelimit-reset')!);
      await res.body?.cancel();
    }
    expect(statuses).toEqual(Array(31).fill(200));
    expect(waits).toEqual([
      {
        key: new URL(gateway.url()).origin,
        reason: 'remaining',
        ms: 3_600_000,
        untilMs: T0 + 3_600_000,
        method: 'DELETE',
        url: `${gateway.url()}/hour/x`,
      },
    ]);
    expect(new Set(resets.slice(0, 30))).toEqual(new Set([String((T0 + 3_600_000) / 1000)]));
    expect(resets[30]).toBe(String((T0 + 7_200_000) / 1000));
  });

  test('typed errors: a final non-2xx answer throws ApiError with the body', async ({
    redis,
    redisClient,
    upstream,
    gateways,
  }) => {
    const clock = await fakeWorld(redisClient);
    const gateway = await startWindowsGateway({ redis, upstream, gateways });
    const client = new TollgateClient({ baseUrl: `${gateway.url()}/nowhere`, clock });
    const err = (await client.websites.show(1).catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect([err.status, err.body]).toEqual([
      404,
      { error: { code: 'route_not_found', message: 'No route matches this request.' } },
    ]);
  });
});

describe('abort', () => {
  test('an abort during the Retry-After wait rejects the call and sends nothing more', async ({
    redis,
    redisClient,
    upstream,
    gateways,
  }) => {
    await redisClient.flushall();
    const gateway = await startWindowsGateway({ redis, upstream, gateways });
    await spendMinuteWindow(gateway.url(), '/minute/spent');
    const clock = new HoldingClock();
    let sent = 0;
    const http = new RateLimitedFetch({ clock, fetch: (input, init) => (sent++, fetch(input, init)) });
    const controller = new AbortController();
    const call = http.fetch(`${gateway.url()}/minute/spent`, {
      method: 'POST',
      body: 'x',
      signal: controller.signal,
    });
    await waitFor(
      () => clock.sleeps.length,
      (n) => n === 1,
      { what: 'the client to wait' },
    );
    expect(clock.sleeps[0]).toBeGreaterThan(58_000);
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(sent).toBe(1);
    expect(http.limits.state(new URL(gateway.url()).origin)).toMatchObject({ inFlight: 0, remaining: 0 });
  });
});
