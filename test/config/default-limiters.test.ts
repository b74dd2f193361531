// Each limiter of the shipped config at its exact edge, through the real gateway and a real Redis.
import { describe, expect } from 'vitest';
import { hashPart } from '../../src/identity/hash.js';
import { windowKey } from '../../src/limits/plan.js';
import { burst } from '../helpers/burst.js';
import { clientAddresses, expectLimited } from '../helpers/clients.js';
import { NO_ADDRESS_BUDGETS } from '../helpers/embedded.js';
import { shippedConfigTest } from '../helpers/fixtures.js';
import { limitHeaders, send, type Reply } from '../helpers/gateway.js';
import { visitorJwt } from '../helpers/tokens.js';

const MESSAGES = {
  init: 'Too many widget initialization requests. Please try again shortly.',
  session: 'Too many widget requests for this conversation. Please slow down.',
  leads: 'Too many lead submissions. Please wait before trying again.',
  wp: 'Too many bulk-sync requests for this workspace. Please slow down.',
  inline: 'Too Many Attempts.',
};

// The stream path is spent in bursts of one session here: the streams cap is another test's subject.
// Every test here sends from one address: the per-address storage budgets (not the spec's, tested
// in services/widget/storage-budgets.test.ts) are lifted, so the spec's limiters alone are seen.
const test = shippedConfigTest({ MAX_STREAMS_PER_SESSION: '0', ...NO_ADDRESS_BUDGETS })
  /** The file's Redis client, to inspect keys. */
  .extend('inspect', { scope: 'file' }, ({ redisClient }) => redisClient)
  /** A POST of `{}` to the gateway. */
  .extend(
    'post',
    { scope: 'file' },
    ({ gateway }) =>
      (path: string, headers: Record<string, string>) =>
        send(`${gateway.url()}${path}`, { method: 'POST', headers, body: '{}' }),
  );

const newClient = clientAddresses();

/** Sends `limit` allowed requests; checks every one was forwarded with the exact remaining count. */
async function spend(limit: number, request: () => Promise<Reply>): Promise<Reply[]> {
  const replies = await burst(limit - 1, request);
  for (const r of replies) expect(r.status).toBe(200);
  const remaining = replies.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((a, b) => a - b);
  expect(remaining).toEqual(Array.from({ length: limit - 1 }, (_, i) => i + 1));
  const resets = new Set(replies.map((r) => Number(r.headers['x-ratelimit-reset'])));
  expect(Math.max(...resets) - Math.min(...resets)).toBeLessThanOrEqual(1);
  const last = await request();
  expect(last.status).toBe(200);
  expect(limitHeaders(last)).toMatchObject({
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': '0',
  });
  expect(last.headers['retry-after']).toBeUndefined();
  return [...replies, last];
}

describe('widget-init: 1000/min by IP + user agent, 30000/hour by IP', () => {
  test('the 1000th request passes, the 1001st gets 429, and the hour budget is untouched by it', async ({
    gateway,
    inspect,
    upstream,
    post,
  }) => {
    const ip = newClient();
    const headers = { 'x-forwarded-for': ip, 'user-agent': 'agent-A' };
    await spend(1000, () => post('/api/v1/widget/init', headers));
    expectLimited(await post('/api/v1/widget/init', headers), 1000, MESSAGES.init, 60);
    expect(upstream.seen.filter((s) => String(s.headers['x-forwarded-for']).startsWith(ip))).toHaveLength(
      1000,
    );

    const table = gateway.table;
    const limiter = table.limiters.get('widget-init')!;
    const parts = (ua: string) => (p: string) => (p === 'ip' ? hashPart(`ip=${ip}`) : hashPart(`ua=${ua}`));
    expect(await inspect.get(windowKey('tg:', limiter, 1, parts('agent-A')))).toBe('1000');

    // Another user agent on the same IP has its own minute budget and shares the hour.
    const other = await post('/api/v1/widget/init', { ...headers, 'user-agent': 'agent-B' });
    expect(other.status).toBe(200);
    expect(other.headers['x-ratelimit-limit']).toBe('1000');
    expect(other.headers['x-ratelimit-remaining']).toBe('999');
    expect(await inspect.get(windowKey('tg:', limiter, 1, parts('agent-B')))).toBe('1001');
  });

  test('the 30000th request of the hour passes and the next gets 429 from the hour window', async ({
    gateway,
    inspect,
    post,
  }) => {
    const ip = newClient();
    const limiter = gateway.table.limiters.get('widget-init')!;
    const hourKey = windowKey('tg:', limiter, 1, () => hashPart(`ip=${ip}`));
    await inspect.set(hourKey, 29_999, 'PX', 3_600_000); // 29999 hits already this hour

    const allowed = await post('/api/v1/widget/init', { 'x-forwarded-for': ip, 'user-agent': 'agent-C' });
    expect(allowed.status).toBe(200);
    expect(limitHeaders(allowed)).toMatchObject({
      'x-ratelimit-limit': '30000',
      'x-ratelimit-remaining': '0',
    });

    const refused = await post('/api/v1/widget/init', { 'x-forwarded-for': ip, 'user-agent': 'agent-D' });
    expectLimited(refused, 30_000, MESSAGES.init, 3600);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3500);
    // Refused by the hour window: agent-D's minute window was not incremented either.
    const minuteKeyD = windowKey('tg:', limiter, 0, (p) =>
      p === 'ip' ? hashPart(`ip=${ip}`) : hashPart('ua=agent-D'),
    );
    expect(await inspect.exists(minuteKeyD)).toBe(0);
    expect(await inspect.get(hourKey)).toBe('30000');
  });
});

describe('widget-session: 300/min per visitor JWT', () => {
  test('messages, events and conversation operations share one budget', async ({ gateway, post }) => {
    const jwt = await visitorJwt(`session-${Date.now()}`);
    const paths = [
      ['POST', '/api/v1/widget/messages'],
      ['POST', '/api/v1/widget/messages/stream'],
      ['POST', '/api/v1/widget/events'],
      ['POST', '/api/v1/widget/conversation/messages'],
      ['POST', '/api/v1/widget/conversation/clear'],
      ['POST', '/api/v1/widget/request-human'],
      ['DELETE', '/api/v1/widget/me'],
    ] as const;
    let i = 0;
    await spend(300, () => {
      const [method, path] = paths[i++ % paths.length]!;
      return send(`${gateway.url()}${path}`, { method, headers: { authorization: `Bearer ${jwt}` } });
    });
    expectLimited(await post('/api/v1/widget/events', { 'x-widget-token': jwt }), 300, MESSAGES.session, 60);
  });

  test('another session from the same IP has its own budget', async ({ post }) => {
    const reply = await post('/api/v1/widget/messages', {
      authorization: `Bearer ${await visitorJwt('fresh')}`,
    });
    expect(reply.status).toBe(200);
    expect(limitHeaders(reply)).toMatchObject({ 'x-ratelimit-limit': '300', 'x-ratelimit-remaining': '299' });
  });
});

describe('widget-leads: 30/min per visitor JWT', () => {
  test('the 31st lead is refused, and leads do not spend the session budget', async ({ post }) => {
    const jwt = await visitorJwt(`leads-${Date.now()}`);
    await spend(30, () => post('/api/v1/widget/leads', { authorization: `Bearer ${jwt}` }));
    expectLimited(
      await post('/api/v1/widget/leads', { authorization: `Bearer ${jwt}` }),
      30,
      MESSAGES.leads,
      60,
    );
    const session = await post('/api/v1/widget/messages', { authorization: `Bearer ${jwt}` });
    expect(limitHeaders(session)).toMatchObject({
      'x-ratelimit-limit': '300',
      'x-ratelimit-remaining': '299',
    });
  });
});

describe('wp-plugin: 60/min per workspace token id', () => {
  test('every /v1/wp/* endpoint shares the budget; the 61st request is refused', async ({ post }) => {
    const auth = { authorization: 'Bearer 7|s3cret' };
    const paths = ['/v1/wp/handshake', '/v1/wp/posts/sync', '/v1/wp/products/changed', '/v1/wp/coupons/sync'];
    let i = 0;
    await spend(60, () => post(paths[i++ % paths.length]!, { ...auth, 'x-forwarded-for': newClient() }));
    expectLimited(await post('/v1/wp/handshake', auth), 60, MESSAGES.wp, 60);
  });

  test('a missing or invalid token gets 401 with the original codes and the headers', async ({ post }) => {
    const ip = newClient();
    const missing = await post('/v1/wp/handshake', { 'x-forwarded-for': ip });
    expect(missing.status).toBe(401);
    expect(missing.json()).toEqual({ error: { code: 'missing_token', message: 'API token missing.' } });
    expect(limitHeaders(missing)).toMatchObject({ 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '59' });

    for (const [i, token] of ['7|wrong', 'no-bar', '8|s3cret', '|s3cret'].entries()) {
      const invalid = await post('/v1/wp/handshake', {
        'x-forwarded-for': ip,
        authorization: `Bearer ${token}`,
      });
      expect(invalid.status).toBe(401);
      expect(invalid.json()).toEqual({
        error: { code: 'invalid_token', message: 'API token is invalid or has been revoked.' },
      });
      // Counted under this IP's fallback key (token 7's own budget is spent by the test above).
      expect(limitHeaders(invalid)).toMatchObject({
        'x-ratelimit-limit': '60',
        'x-ratelimit-remaining': String(58 - i),
      });
    }
  });
});

describe('inline per-IP limiters', () => {
  test.for([
    ['/api/v1/widget/typing', 600],
    ['/api/v1/widget/satisfaction', 60],
    ['/api/v1/widget/coupon/apply', 120],
  ] as const)('%s allows %i per minute per IP', async ([path, limit], { post }) => {
    const headers = { 'x-forwarded-for': newClient() };
    await spend(limit, () => post(path, headers));
    expectLimited(await post(path, headers), limit, MESSAGES.inline, 60);
    const otherIp = await post(path, { 'x-forwarded-for': newClient() });
    expect(otherIp.status).toBe(200);
    expect(otherIp.headers['x-ratelimit-remaining']).toBe(String(limit - 1));
  });
});

describe('path spelling', () => {
  test('a trailing slash, percent-encoding or dot segments still meet the limiter', async ({
    gateway,
    post,
  }) => {
    const ip = newClient();
    const spellings = [
      '/api/v1/widget/init',
      '/api/v1/widget/init/',
      '/api/v1/widget/%69nit',
      '/api/v1/widget/./init',
    ];
    for (const [i, path] of spellings.entries()) {
      const reply = await post(path, { 'x-forwarded-for': ip, 'user-agent': 'spelling' });
      expect(reply.status, path).toBe(200);
      expect(limitHeaders(reply)).toMatchObject({
        'x-ratelimit-limit': '1000',
        'x-ratelimit-remaining': String(999 - i),
      });
    }
    for (const path of ['/api/v1/widget/conversation/', '/api/v1/widget/leads/']) {
      const reply = await post(path, {});
      expect(reply.status, path).toBe(401);
      expect(reply.headers['x-ratelimit-limit']).toBeDefined();
    }
    const wp = await send(`${gateway.url()}/v1/wp/`, { method: 'POST' });
    expect(wp.json()).toEqual({ error: { code: 'missing_token', message: 'API token missing.' } });
    const leads = await post('/api/v1/widget/leads/', {});
    expect(leads.status).toBe(401);
    expect(leads.json()).toEqual({ error: { code: 'missing_token', message: 'Visitor token missing.' } });
  });
});

describe('unlimited surfaces', () => {
  test('the websites API and the reports host carry no rate-limit headers', async ({ gateway }) => {
    for (const [path, host] of [
      ['/api/v1/websites', 'localhost:8080'],
      ['/api/v1/reports', 'analyzer.localhost:8080'],
      ['/api/v1/widget/init', 'analyzer.localhost'],
    ] as const) {
      const reply = await send(`${gateway.url()}${path}`, { method: 'POST', headers: { host } });
      expect(reply.status).toBe(200);
      expect(limitHeaders(reply)).toEqual({});
    }
  });

  test('other widget paths and methods count under widget-other (120 per minute per IP)', async ({
    gateway,
  }) => {
    for (const [method, path] of [
      ['POST', '/api/v1/widget/config'],
      ['GET', '/api/v1/widget/init'],
    ] as const) {
      const reply = await send(`${gateway.url()}${path}`, {
        method,
        headers: { 'x-forwarded-for': newClient() },
      });
      expect(reply.status).toBe(200);
      expect(limitHeaders(reply)).toMatchObject({
        'x-ratelimit-limit': '120',
        'x-ratelimit-remaining': '119',
      });
    }
  });
});
