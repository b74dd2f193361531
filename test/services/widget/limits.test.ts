// The shipped limiters on the real widget endpoints, end to end: a JWT from init, a real Redis, the SQLite file.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import { describe, expect } from 'vitest';
import { burst } from '../../helpers/burst.js';
import { expectLimited } from '../../helpers/clients.js';
import { NO_ADDRESS_BUDGETS } from '../../helpers/embedded.js';
import { embeddedTest } from '../../helpers/fixtures.js';
import { limitHeaders, send, type Reply } from '../../helpers/gateway.js';
import { visitorJwt } from '../../helpers/tokens.js';

const SESSION_MESSAGE = 'Too many widget requests for this conversation. Please slow down.';

let nextIp = 1;

const test = embeddedTest({
  redis: true,
  workspaces: ['acme'],
  env: { TRUSTED_PROXIES: '127.0.0.1', ...NO_ADDRESS_BUDGETS },
})
  .extend('pool', { scope: 'file' }, ({ gateway }, { onCleanup }) => {
    const pool = new Pool(gateway.url(), { connections: 20, pipelining: 1 });
    onCleanup(() => pool.close());
    return pool;
  })
  .extend(
    'post',
    { scope: 'file' },
    ({ gateway, pool }) =>
      function post(path: string, headers: Record<string, string>, body?: unknown): Promise<Reply> {
        return send(`${gateway.url()}${path}`, {
          method: 'POST',
          dispatcher: pool,
          headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      },
  )
  /** A visitor from its own address, with a token from init. */
  .extend(
    'visitor',
    { scope: 'file' },
    ({ post }) =>
      async function visitor(): Promise<{ ip: string; token: string; sessionId: string }> {
        const ip = `192.0.2.${nextIp++}`;
        const reply = await post('/api/v1/widget/init', { 'x-forwarded-for': ip }, { workspace: 'acme' });
        expect(reply.status).toBe(200);
        const { token, session_id } = reply.json() as { token: string; session_id: string };
        return { ip, token, sessionId: session_id };
      },
  );

describe('widget-session: 300/min per visitor token', () => {
  test('messages, events and conversation operations share one budget; leads keep their own', async ({
    visitor,
    post,
    gateway,
  }) => {
    const { token, ip } = await visitor();
    const auth = { authorization: `Bearer ${token}`, 'x-forwarded-for': ip };
    const calls: [string, unknown, number][] = [
      ['/api/v1/widget/messages', { body: 'hello' }, 201],
      ['/api/v1/widget/events', { events: [{ type: 'page_view' }] }, 202],
      ['/api/v1/widget/conversation/messages', { per_page: 5 }, 200],
      ['/api/v1/widget/conversation/clear', undefined, 200],
      ['/api/v1/widget/request-human', undefined, 200],
    ];
    const replies = await burst(
      300,
      async (i) => {
        const [path, body, status] = calls[i % calls.length]!;
        const reply = await post(path, auth, body);
        expect(reply.status, path).toBe(status);
        return reply;
      },
      20,
    );
    for (const r of replies) expect(r.headers['x-ratelimit-limit']).toBe('300');
    const remaining = replies.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 300 }, (_, i) => i));

    for (const [path, body] of calls) {
      expectLimited(await post(path, auth, body), 300, SESSION_MESSAGE, 60);
    }
    const erase = await send(`${gateway.url()}/api/v1/widget/me`, { method: 'DELETE', headers: auth });
    expectLimited(erase, 300, SESSION_MESSAGE, 60);

    // The 429 is the gateway's: the service never saw it, and leads are a separate budget.
    const lead = await post('/api/v1/widget/leads', auth, {
      name: 'Ann',
      email: 'ann@example.com',
      consent: true,
    });
    expect(lead.status).toBe(201);
    expect(limitHeaders(lead)).toEqual({
      'x-ratelimit-limit': '30',
      'x-ratelimit-remaining': '29',
      'x-ratelimit-reset': expect.stringMatching(/^\d+$/),
    });

    // Another visitor on the same address is not affected.
    const other = await visitor();
    const fresh = await post(
      '/api/v1/widget/messages',
      { authorization: `Bearer ${other.token}`, 'x-forwarded-for': ip },
      {
        body: 'hi',
      },
    );
    expect(fresh.status).toBe(201);
    expect(limitHeaders(fresh)).toMatchObject({ 'x-ratelimit-limit': '300', 'x-ratelimit-remaining': '299' });
  });

  test('a fresh token of a resumed session keeps the session’s budget', async ({ visitor, post }) => {
    const { token, ip } = await visitor();
    await post(
      '/api/v1/widget/messages',
      { authorization: `Bearer ${token}`, 'x-forwarded-for': ip },
      { body: 'a' },
    );
    const resumed = await post(
      '/api/v1/widget/init',
      { authorization: `Bearer ${token}`, 'x-forwarded-for': ip },
      {
        workspace: 'acme',
      },
    );
    const fresh = (resumed.json() as { token: string }).token;
    expect(fresh).not.toBe(token);
    const reply = await post(
      '/api/v1/widget/messages',
      { 'x-widget-token': fresh, 'x-forwarded-for': ip },
      { body: 'b' },
    );
    expect(limitHeaders(reply)).toMatchObject({ 'x-ratelimit-limit': '300', 'x-ratelimit-remaining': '298' });
  });
});

describe('widget-leads: 30/min per visitor token', () => {
  test('the 31st lead is refused', async ({ visitor, post }) => {
    const { token, ip } = await visitor();
    const auth = { authorization: `Bearer ${token}`, 'x-forwarded-for': ip };
    const lead = { name: 'Ann', email: 'ann@example.com', consent: true };
    const replies = await burst(30, () => post('/api/v1/widget/leads', auth, lead), 20);
    expect(replies.map((r) => r.status)).toEqual(Array(30).fill(201));
    expectLimited(
      await post('/api/v1/widget/leads', auth, lead),
      30,
      'Too many lead submissions. Please wait before trying again.',
      60,
    );
  });
});

describe('an expired visitor token', () => {
  test('gets 401 from the gateway, with the rate-limit headers', async ({ visitor, dataDir, post }) => {
    const { sessionId, ip } = await visitor();
    // Signed with the secret the service generated under DATA_DIR, expired beyond the 5 s tolerance.
    const secret = readFileSync(join(dataDir, 'widget-jwt.secret'), 'utf8').trim();
    const expired = await visitorJwt(sessionId, { secret, expiresIn: Math.floor(Date.now() / 1000) - 30 });
    const reply = await post(
      '/api/v1/widget/messages',
      { authorization: `Bearer ${expired}`, 'x-forwarded-for': ip },
      {
        body: 'late',
      },
    );
    expect(reply.status).toBe(401);
    expect(reply.json()).toEqual({ error: { code: 'token_expired', message: 'Visitor token has expired.' } });
    expect(limitHeaders(reply)).toEqual({
      'x-ratelimit-limit': '300',
      'x-ratelimit-remaining': '299',
      'x-ratelimit-reset': expect.stringMatching(/^\d+$/),
    });
    const lead = await post('/api/v1/widget/leads', { 'x-widget-token': expired, 'x-forwarded-for': ip }, {});
    expect(lead.status).toBe(401);
    expect(lead.headers['x-ratelimit-limit']).toBe('30');
  });
});

describe('per-IP limits: typing 600, satisfaction 60, coupon 120 per minute', () => {
  test('the 61st rating from one address is refused, whatever the session', async ({ visitor, post }) => {
    const ip = `192.0.2.${nextIp++}`;
    const visitors = await Promise.all([visitor(), visitor()]);
    const replies = await burst(
      60,
      (i) =>
        post(
          '/api/v1/widget/satisfaction',
          {
            authorization: `Bearer ${visitors[i % 2]!.token}`,
            'x-forwarded-for': ip,
          },
          { rating: (i % 5) + 1 },
        ),
      20,
    );
    expect(replies.map((r) => r.status)).toEqual(Array(60).fill(200));
    expect(replies.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 60 }, (_, i) => i),
    );
    const refused = await post(
      '/api/v1/widget/satisfaction',
      {
        authorization: `Bearer ${visitors[0]!.token}`,
        'x-forwarded-for': ip,
      },
      { rating: 5 },
    );
    expectLimited(refused, 60, 'Too Many Attempts.', 60);

    // Typing and coupons from the same address have budgets of their own.
    const typing = await post('/api/v1/widget/typing', {
      'x-widget-token': visitors[0]!.token,
      'x-forwarded-for': ip,
    });
    expect(typing.status).toBe(204);
    expect(limitHeaders(typing)).toMatchObject({
      'x-ratelimit-limit': '600',
      'x-ratelimit-remaining': '599',
    });
    const coupon = await post(
      '/api/v1/widget/coupon/apply',
      { 'x-widget-token': visitors[0]!.token, 'x-forwarded-for': ip },
      {
        code: 'NONE',
      },
    );
    expect(coupon.status).toBe(404);
    expect(limitHeaders(coupon)).toMatchObject({
      'x-ratelimit-limit': '120',
      'x-ratelimit-remaining': '119',
    });
  });
});
