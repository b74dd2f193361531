// The fetch wrapper against a scripted server (an injected fetch) and a manual clock.
import { describe, expect, test } from 'vitest';
import { RateLimitDeadlineError } from '../../src/limiter-state.js';
import { RateLimitedFetch, type RateLimitedEvent } from '../../src/rate-limited-fetch.js';
import { ManualClock } from '../helpers/clocks.js';

const T0 = 1_800_000_000_000;

interface Seen {
  readonly url: string;
  readonly method: string;
  readonly body: string | undefined;
  readonly authorization: string | null;
  readonly at: number;
}

/** A fixed window of `limit` per `periodMs` (keyed by host and Authorization), in the gateway's header format. */
function windowServer(
  clock: ManualClock,
  limit: number,
  periodMs: number,
  keyOf = (url: URL, headers: Headers) => `${url.host} ${headers.get('authorization')}`,
) {
  const seen: Seen[] = [];
  const windows = new Map<string, { count: number; resetAtMs: number }>();
  const fetch = async (url: URL, init: RequestInit): Promise<Response> => {
    const headers = new Headers(init.headers);
    const now = clock.now();
    seen.push({
      url: url.href,
      method: init.method ?? 'GET',
      body: init.body == null ? undefined : String(init.body),
      authorization: headers.get('authorization'),
      at: now,
    });
    const key = keyOf(url, headers);
    let w = windows.get(key);
    if (!w || w.resetAtMs <= now) windows.set(key, (w = { count: 0, resetAtMs: now + periodMs }));
    const rate = {
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-reset': String(Math.ceil(w.resetAtMs / 1000)),
    };
    if (w.count >= limit) {
      return new Response('{"error":{"code":"rate_limited","message":"slow down"}}', {
        status: 429,
        headers: {
          ...rate,
          'x-ratelimit-remaining': '0',
          'retry-after': String(Math.ceil((w.resetAtMs - now) / 1000)),
        },
      });
    }
    w.count++;
    return new Response('{"ok":true}', {
      status: 200,
      headers: { ...rate, 'x-ratelimit-remaining': String(limit - w.count) },
    });
  };
  return { fetch, seen, windows };
}

/** Lets the client's promises run (answers and wake-ups) without moving the clock. */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

describe('RateLimitedFetch', () => {
  test('a POST refused with Retry-After: 60 is retried after exactly 60 s, with its body, once', async () => {
    const clock = new ManualClock(T0);
    const server = windowServer(clock, 1, 60_000);
    const events: RateLimitedEvent[] = [];
    const waits: unknown[] = [];
    const http = new RateLimitedFetch({
      fetch: server.fetch,
      clock,
      onRateLimited: (e) => events.push(e),
      onWait: (e) => waits.push(e),
    });
    // Another caller (another client instance, same key) spent the window.
    await new RateLimitedFetch({ fetch: server.fetch, clock }).fetch('https://api.test/x', {
      method: 'POST',
    });
    const call = http.fetch('https://api.test/api/v1/widget/leads', {
      method: 'post',
      body: 'email=a%40b.c',
    });
    await settle();
    expect(clock.sleeping).toEqual([T0 + 60_000]);
    expect(events).toEqual([
      {
        key: 'https://api.test',
        method: 'POST',
        url: 'https://api.test/api/v1/widget/leads',
        attempt: 1,
        headers: { limit: 1, remaining: 0, resetAtMs: T0 + 60_000, retryAfterMs: 60_000 },
        delayMs: 60_000,
        willRetry: true,
      },
    ]);
    await clock.advance(59_999);
    expect(server.seen).toHaveLength(2);
    await clock.advance(1);
    const res = await call;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    expect(server.seen.map((s) => [s.method, s.body, s.at - T0])).toEqual([
      ['POST', undefined, 0],
      ['POST', 'email=a%40b.c', 0],
      ['POST', 'email=a%40b.c', 60_000],
    ]);
    expect(waits).toEqual([
      {
        key: 'https://api.test',
        reason: 'retry-after',
        ms: 60_000,
        untilMs: T0 + 60_000,
        method: 'POST',
        url: 'https://api.test/api/v1/widget/leads',
      },
    ]);
  });

  test('an hour window is waited out whole: no cap on one wait', async () => {
    const clock = new ManualClock(T0);
    const server = windowServer(clock, 2, 3_600_000);
    const http = new RateLimitedFetch({ fetch: server.fetch, clock });
    for (let i = 0; i < 2; i++) expect((await http.fetch('https://api.test/x')).status).toBe(200);
    const third = http.fetch('https://api.test/x');
    await settle();
    // Remaining reached 0: the third call is not sent, it sleeps until the reset.
    expect(server.seen).toHaveLength(2);
    expect(clock.sleeping).toEqual([T0 + 3_600_000]);
    await clock.advance(3_600_000);
    expect((await third).status).toBe(200);
    expect(server.seen.map((s) => s.at - T0)).toEqual([0, 0, 3_600_000]);
  });

  test('a concurrent burst past the limit: every call succeeds, none is sent while the window is spent', async () => {
    const clock = new ManualClock(T0);
    const server = windowServer(clock, 30, 60_000);
    let refused = 0;
    const http = new RateLimitedFetch({ fetch: server.fetch, clock, onRateLimited: () => refused++ });
    const calls = Array.from({ length: 75 }, (_, i) =>
      http.fetch(`https://api.test/x?i=${i}`, { method: 'POST' }),
    );
    for (let window = 0; window < 2; window++) {
      await settle();
      // Every call not yet sent sleeps until the reset (each one reports its wait).
      expect(new Set(clock.sleeping)).toEqual(new Set([T0 + (window + 1) * 60_000]));
      expect(clock.sleeping).toHaveLength(75 - 30 * (window + 1));
      await clock.advance(60_000);
    }
    const statuses = await Promise.all(calls.map(async (c) => (await c).status));
    expect(statuses).toEqual(Array(75).fill(200));
    expect(refused).toBe(0);
    const perWindow = [0, 0, 0];
    for (const s of server.seen) perWindow[(s.at - T0) / 60_000]!++;
    expect(perWindow).toEqual([30, 30, 15]);
  });

  test('the remaining threshold pauses earlier', async () => {
    const clock = new ManualClock(T0);
    const server = windowServer(clock, 5, 60_000);
    const http = new RateLimitedFetch({ fetch: server.fetch, clock, remainingThreshold: 2 });
    for (let i = 0; i < 3; i++) await http.fetch('https://api.test/x');
    const next = http.fetch('https://api.test/x');
    await settle();
    expect(server.seen).toHaveLength(3);
    await clock.advance(60_000);
    await next;
    expect(server.seen.map((s) => s.at - T0)).toEqual([0, 0, 0, 60_000]);
  });

  test('calls with different credentials or hosts do not share a pause; the same credential does', async () => {
    const clock = new ManualClock(T0);
    const server = windowServer(clock, 1, 60_000);
    const http = new RateLimitedFetch({ fetch: server.fetch, clock });
    const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
    await http.fetch('https://api.test/x', bearer('a'));
    await http.fetch('https://api.test/x', bearer('b'));
    await http.fetch('https://other.test/x', bearer('a'));
    const same = http.fetch('https://api.test/y', bearer('a'));
    await settle();
    expect(server.seen).toHaveLength(3);
    expect(clock.sleeping).toEqual([T0 + 60_000]);
    await clock.advance(60_000);
    expect((await same).status).toBe(200);
  });

  test('a custom key function decides what shares a pause', async () => {
    const clock = new ManualClock(T0);
    const server = windowServer(clock, 1, 60_000, (url) => url.pathname);
    const http = new RateLimitedFetch({ fetch: server.fetch, clock, limiterKey: ({ url }) => url.pathname });
    await http.fetch('https://api.test/a');
    expect((await http.fetch('https://api.test/b')).status).toBe(200);
    expect(server.seen).toHaveLength(2);
  });

  test('retries are bounded: after maxRetries the last 429 is handed back', async () => {
    const clock = new ManualClock(T0);
    let calls = 0;
    const always429 = async () => {
      calls++;
      return new Response('{}', { status: 429, headers: { 'retry-after': '1' } });
    };
    const events: RateLimitedEvent[] = [];
    const http = new RateLimitedFetch({
      fetch: always429,
      clock,
      maxRetries: 2,
      onRateLimited: (e) => events.push(e),
    });
    const call = http.fetch('https://api.test/x');
    for (let i = 0; i < 2; i++) {
      await settle();
      await clock.advance(1000);
    }
    const res = await call;
    expect(res.status).toBe(429);
    expect(calls).toBe(3);
    expect(events.map((e) => [e.attempt, e.willRetry])).toEqual([
      [1, true],
      [2, true],
      [3, false],
    ]);
  });

  test('a 429 that names no wait, or a streamed body, is handed back at once', async () => {
    const clock = new ManualClock(T0);
    let calls = 0;
    const bare = async () => {
      calls++;
      return new Response('{}', { status: 429 });
    };
    expect((await new RateLimitedFetch({ fetch: bare, clock }).fetch('https://api.test/x')).status).toBe(429);
    expect(calls).toBe(1);
    const server = windowServer(clock, 0, 60_000);
    const body = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode('x'));
        c.close();
      },
    });
    const res = await new RateLimitedFetch({ fetch: server.fetch, clock }).fetch('https://api.test/x', {
      method: 'POST',
      body,
    });
    expect(res.status).toBe(429);
    expect(server.seen).toHaveLength(1);
  });

  test('an overall deadline: a 429 whose wait ends after it is handed back; a pause past it throws', async () => {
    const clock = new ManualClock(T0);
    const server = windowServer(clock, 1, 60_000);
    const http = new RateLimitedFetch({ fetch: server.fetch, clock, deadlineMs: 30_000 });
    await http.fetch('https://api.test/x');
    await expect(http.fetch('https://api.test/x')).rejects.toBeInstanceOf(RateLimitDeadlineError);
    const other = new RateLimitedFetch({ fetch: server.fetch, clock });
    const res = await other.fetch('https://api.test/x', { deadlineMs: 59_000 });
    expect(res.status).toBe(429);
    expect(clock.sleeping).toEqual([]);
  });

  test('an abort during the wait rejects with its reason and sends nothing more', async () => {
    const clock = new ManualClock(T0);
    const server = windowServer(clock, 1, 60_000);
    const http = new RateLimitedFetch({ fetch: server.fetch, clock });
    await http.fetch('https://api.test/x');
    const controller = new AbortController();
    const call = http.fetch('https://api.test/x', { signal: controller.signal });
    await settle();
    expect(clock.sleeping).toEqual([T0 + 60_000]);
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    await clock.advance(60_000);
    expect(server.seen).toHaveLength(1);
  });

  test('a failed request releases its slot: the next call goes', async () => {
    const clock = new ManualClock(T0);
    let fail = true;
    const flaky = async () => {
      if (fail) throw new TypeError('fetch failed');
      return new Response(null, { status: 204 });
    };
    const http = new RateLimitedFetch({ fetch: flaky, clock });
    await expect(http.fetch('https://api.test/x')).rejects.toThrow('fetch failed');
    fail = false;
    expect((await http.fetch('https://api.test/x')).status).toBe(204);
    expect(http.limits.state('https://api.test')).toMatchObject({ inFlight: 0 });
  });
});
