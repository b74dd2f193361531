// The embedded widget service, each endpoint's success and error paths, through the real gateway.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { describe, expect } from 'vitest';
import { servicesConfigFrom } from '../../../src/cli/services-config.js';
import { loadConfigText } from '../../../src/rules/load.js';
import { createServiceApp } from '../../../src/services/kit/app.js';
import { widgetErrors } from '../../../src/services/kit/errors.js';
import { widgetService } from '../../../src/services/widget/service.js';
import { createWorkspaceToken } from '../../../src/services/accounts/workspaces.js';
import { DEFAULT_CONFIG } from '../../helpers/default-config.js';
import { ALICE_KEY, embeddedEnv } from '../../helpers/embedded.js';
import { embeddedTest } from '../../helpers/fixtures.js';
import { limitHeaders, send, silentLogger, type Reply } from '../../helpers/gateway.js';
import { visitorJwt } from '../../helpers/tokens.js';

interface Session {
  token: string;
  session_id: string;
  resumed: boolean;
}

const TIMESTAMP = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const invalid = (fields: Record<string, string[]>) => ({
  error: { code: 'validation_failed', message: 'The given data was invalid.', fields },
});

let nextIp = 1;

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const test = embeddedTest({ redis: true, env: { TRUSTED_PROXIES: '127.0.0.1' } })
  // The workspaces' tokens, made before the gateway starts.
  .extend('tokens', { scope: 'file' }, ({ db }) => ({
    acme: createWorkspaceToken(db, 'acme').token,
    globex: createWorkspaceToken(db, 'globex').token,
  }))
  /** A POST through the gateway, from its own client address (the per-IP budgets never mix). */
  .extend(
    'rawPost',
    { scope: 'file' },
    ({ tokens: _tokens, gateway }) =>
      function post(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
        return send(`${gateway.url()}${path}`, {
          method: 'POST',
          headers: {
            'x-forwarded-for': `203.0.113.${nextIp++}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...headers,
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      },
  )
  // A website of the websites API, and coupons synced by each workspace's shop, through the gateway.
  .extend('websiteId', { scope: 'file' }, async ({ tokens, gateway, rawPost: post }) => {
    const website = await send(`${gateway.url()}/api/v1/websites`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'shop.test' }),
    });
    expect(website.status).toBe(201);
    const websiteId = (website.json() as { data: { id: number } }).data.id;
    const sync = async (token: string, items: object[]) => {
      const reply = await post('/v1/wp/coupons/sync', { items, done: true }, bearer(token));
      expect(reply.status).toBe(200);
    };
    const coupon = (
      id: string,
      code: string,
      discount_type: string,
      amount: number,
      expires_at: string | null,
      usage_limit: number | null,
      usage_count: number,
    ) => ({ id, code, discount_type, amount, expires_at, usage_limit, usage_count });
    await sync(tokens.acme, [
      coupon('c1', 'SAVE10', 'percent', 10, null, null, 0),
      coupon('c2', 'FIVEOFF', 'fixed', 5, '2999-01-01T00:00:00Z', 100, 99),
      coupon('c3', 'OLD', 'percent', 20, '2020-01-01T00:00:00Z', null, 0),
      coupon('c4', 'USEDUP', 'fixed', 3, null, 2, 2),
    ]);
    await sync(tokens.globex, [coupon('g1', 'GLOBEX', 'percent', 50, null, null, 0)]);
    return websiteId;
  })
  // The tests' POST: the seeding above is done before any test calls the API.
  .extend('post', { scope: 'file' }, ({ websiteId: _seeded, rawPost }) => rawPost)
  .extend(
    'init',
    { scope: 'file' },
    ({ post }) =>
      async function init(body: object = { workspace: 'acme' }, headers: Record<string, string> = {}) {
        const reply = await post('/api/v1/widget/init', body, headers);
        expect(reply.status).toBe(200);
        return reply.json() as Session;
      },
  )
  .extend(
    'rows',
    { scope: 'file' },
    ({ db }) =>
      (table: string, sessionId: string) =>
        (
          db.prepare(`SELECT count(*) AS n FROM ${table} WHERE session_id = ?`).get(sessionId) as {
            n: number;
          }
        ).n,
  );

describe('POST /api/v1/widget/init', () => {
  test('starts a session and returns its signed token', async ({ post, websiteId }) => {
    const reply = await post('/api/v1/widget/init', {
      workspace: 'acme',
      website_id: websiteId,
      page_url: 'https://shop.test/pricing',
      locale: 'en-US',
    });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = reply.json() as Session & { expires_at: string };
    expect(body).toEqual({
      token: expect.any(String),
      token_type: 'Bearer',
      session_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      expires_at: expect.any(String),
      resumed: false,
      workspace: { name: 'acme' },
      website_id: websiteId,
      conversation: { messages: 0, human_requested: false },
    });
    const claims = decodeJwt(body.token);
    expect(claims).toEqual({
      sid: body.session_id,
      iss: 'tollgate',
      aud: 'tollgate-widget',
      iat: expect.any(Number),
      exp: claims.iat! + 86_400,
      jti: expect.any(String),
    });
    expect(body.expires_at).toBe(new Date(claims.exp! * 1000).toISOString());
    // The widget-init limiter guards it.
    expect(reply.headers['x-ratelimit-limit']).toBe('1000');
  });

  test('a form body works too', async ({ gateway, websiteId }) => {
    const form = await send(`${gateway.url()}/api/v1/widget/init`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `workspace=acme&website_id=${websiteId}`,
    });
    expect(form.status).toBe(200);
    expect(form.json()).toMatchObject({ workspace: { name: 'acme' }, website_id: websiteId, resumed: false });
  });

  test('a live token of the same workspace resumes its session with a fresh token', async ({
    post,
    init,
    dataDir,
  }) => {
    const first = await init();
    await post('/api/v1/widget/messages', { body: 'hello' }, bearer(first.token));
    const again = await post('/api/v1/widget/init', { workspace: 'acme' }, { 'x-widget-token': first.token });
    expect(again.json()).toEqual({
      token: expect.any(String),
      token_type: 'Bearer',
      session_id: first.session_id,
      expires_at: expect.any(String),
      resumed: true,
      workspace: { name: 'acme' },
      website_id: null,
      conversation: { messages: 1, human_requested: false },
    });
    expect((again.json() as Session).token).not.toBe(first.token);

    // Another workspace, an expired or a forged token: a new session.
    const elsewhere = await init({ workspace: 'globex' }, bearer(first.token));
    expect(elsewhere.resumed).toBe(false);
    expect(elsewhere.session_id).not.toBe(first.session_id);
    const secret = readFileSync(join(dataDir, 'widget-jwt.secret'), 'utf8').trim();
    const expired = await visitorJwt(first.session_id, {
      secret,
      expiresIn: Math.floor(Date.now() / 1000) - 60,
    });
    const forged = await visitorJwt(first.session_id, { secret: 'not-the-secret-not-the-secret-!!' });
    for (const token of [expired, forged]) {
      const fresh = await init({ workspace: 'acme' }, bearer(token));
      expect(fresh.resumed).toBe(false);
      expect(fresh.session_id).not.toBe(first.session_id);
    }
  });
});

describe('visitor token', () => {
  test('the service refuses a missing, invalid or expired token on the per-IP routes', async ({
    post,
    init,
    dataDir,
  }) => {
    const { session_id } = await init();
    const secret = readFileSync(join(dataDir, 'widget-jwt.secret'), 'utf8').trim();
    const expired = await visitorJwt(session_id, { secret, expiresIn: Math.floor(Date.now() / 1000) - 60 });
    // Each from a new client address: the first request of its per-IP budget.
    const cases: [string, Record<string, string>, string, string, number][] = [
      ['/api/v1/widget/typing', {}, 'missing_token', 'Visitor token missing.', 600],
      [
        '/api/v1/widget/coupon/apply',
        bearer('abc.def.ghi'),
        'invalid_token',
        'Visitor token is invalid.',
        120,
      ],
      [
        '/api/v1/widget/satisfaction',
        { 'x-widget-token': expired },
        'token_expired',
        'Visitor token has expired.',
        60,
      ],
    ];
    for (const [path, headers, code, message, limit] of cases) {
      const reply = await post(path, {}, headers);
      expect(reply.status, path).toBe(401);
      expect(reply.json()).toEqual({ error: { code, message } });
      expect(limitHeaders(reply), path).toMatchObject({
        'x-ratelimit-limit': String(limit),
        'x-ratelimit-remaining': String(limit - 1),
      });
    }
  });

  test('on the JWT-keyed routes the gateway refuses a missing token itself', async ({ post }) => {
    const reply = await post('/api/v1/widget/messages', { body: 'hi' });
    expect(reply.status).toBe(401);
    expect(reply.json()).toEqual({ error: { code: 'missing_token', message: 'Visitor token missing.' } });
    expect(limitHeaders(reply)).toMatchObject({ 'x-ratelimit-limit': '300', 'x-ratelimit-remaining': '299' });
  });
});

describe('conversation', () => {
  test('POST /messages stores a message and returns it with id and timestamp', async ({
    post,
    init,
    gateway,
  }) => {
    const { token } = await init();
    const reply = await post('/api/v1/widget/messages', { body: '  Is this in stock?  ' }, bearer(token));
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual({
      message: {
        id: expect.any(Number),
        sender: 'visitor',
        body: 'Is this in stock?',
        created_at: TIMESTAMP,
      },
    });
    const form = await send(`${gateway.url()}/api/v1/widget/messages`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'body=From+a+form',
    });
    expect(form.status).toBe(201);
    expect(form.json()).toMatchObject({ message: { sender: 'visitor', body: 'From a form' } });
  });

  test('conversation/messages pages the conversation oldest first', async ({ post, init }) => {
    const { token } = await init();
    for (const body of ['one', 'two', 'three'])
      await post('/api/v1/widget/messages', { body }, bearer(token));
    const all = await post('/api/v1/widget/conversation/messages', undefined, bearer(token));
    expect(all.status).toBe(200);
    const listed = all.json() as { messages: { body: string }[] };
    expect(listed).toEqual({
      messages: ['one', 'two', 'three'].map((body) => ({
        id: expect.any(Number),
        sender: 'visitor',
        body,
        created_at: TIMESTAMP,
      })),
      page: 1,
      per_page: 50,
      total: 3,
    });
    const second = await post(
      '/api/v1/widget/conversation/messages',
      { page: 2, per_page: 2 },
      bearer(token),
    );
    expect(second.json()).toEqual({ messages: [listed.messages[2]], page: 2, per_page: 2, total: 3 });
    const bad = await post('/api/v1/widget/conversation/messages', { page: 0, per_page: 500 }, bearer(token));
    expect(bad.status).toBe(422);
    expect(bad.json()).toEqual(
      invalid({
        page: ['The page field must be a positive integer.'],
        per_page: ['The per_page field must be an integer between 1 and 100.'],
      }),
    );
  });

  test('conversation/clear empties it; request-human marks it once, with a system message', async ({
    post,
    init,
  }) => {
    const { token } = await init();
    await post('/api/v1/widget/messages', { body: 'help' }, bearer(token));
    const human = await post('/api/v1/widget/request-human', undefined, bearer(token));
    expect(human.status).toBe(200);
    expect(human.json()).toEqual({
      conversation: { human_requested: true, human_requested_at: TIMESTAMP },
      message: {
        id: expect.any(Number),
        sender: 'system',
        body: 'A team member will join shortly.',
        created_at: TIMESTAMP,
      },
    });
    const requestedAt = (human.json() as { conversation: { human_requested_at: string } }).conversation
      .human_requested_at;
    const again = await post('/api/v1/widget/request-human', undefined, bearer(token));
    expect(again.json()).toEqual({
      conversation: { human_requested: true, human_requested_at: requestedAt },
      message: null,
    });
    const resumed = await post('/api/v1/widget/init', { workspace: 'acme' }, bearer(token));
    expect(resumed.json()).toMatchObject({ conversation: { messages: 2, human_requested: true } });

    const cleared = await post('/api/v1/widget/conversation/clear', undefined, bearer(token));
    expect(cleared.status).toBe(200);
    expect(cleared.json()).toEqual({ cleared: 2 });
    const empty = await post('/api/v1/widget/conversation/messages', {}, bearer(token));
    expect(empty.json()).toEqual({ messages: [], page: 1, per_page: 50, total: 0 });
    const after = await post('/api/v1/widget/init', { workspace: 'acme' }, bearer(token));
    expect(after.json()).toMatchObject({ conversation: { messages: 0, human_requested: false } });
  });
});

describe('POST /api/v1/widget/events', () => {
  test('records a batch', async ({ post, init, db }) => {
    const { token, session_id } = await init();
    const reply = await post(
      '/api/v1/widget/events',
      {
        events: [
          { type: 'open' },
          { type: 'page_view', occurred_at: '2030-01-02T03:04:05+02:00', data: { path: '/pricing' } },
          { type: 'close' },
        ],
      },
      bearer(token),
    );
    expect(reply.status).toBe(202);
    expect(reply.json()).toEqual({ accepted: 3 });
    expect(
      db
        .prepare('SELECT type, occurred_at, data FROM widget_events WHERE session_id = ? AND type = ?')
        .get(session_id, 'page_view'),
    ).toEqual({ type: 'page_view', occurred_at: '2030-01-02T01:04:05.000Z', data: '{"path":"/pricing"}' });
  });

  test('deeply nested data is a 422 on events.N.data, not a 500; 32 levels are stored', async ({
    init,
    rows,
    gateway,
    db,
  }) => {
    const { token, session_id } = await init();
    /** An events body as text: JSON.stringify itself would overflow on the deep one. */
    const nested = (depth: number) =>
      `{"events":[{"type":"open"},{"type":"page_view","data":{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}}]}`;
    const events = (text: string) =>
      send(`${gateway.url()}/api/v1/widget/events`, {
        method: 'POST',
        headers: {
          ...bearer(token),
          'content-type': 'application/json',
          'x-forwarded-for': `203.0.113.${nextIp++}`,
        },
        body: text,
      });
    const tooDeep = invalid({
      'events.1.data': ['The data field must not nest objects and arrays more than 32 levels deep.'],
    });
    for (const depth of [20_000, 33]) {
      const reply = await events(nested(depth));
      expect({ status: reply.status, body: reply.json() }, `depth ${depth}`).toEqual({
        status: 422,
        body: tooDeep,
      });
    }
    expect(rows('widget_events', session_id)).toBe(0);
    const deepest = await events(nested(32));
    expect({ status: deepest.status, body: deepest.json() }).toEqual({ status: 202, body: { accepted: 2 } });
    expect(
      db
        .prepare('SELECT data FROM widget_events WHERE session_id = ? AND type = ?')
        .pluck()
        .get(session_id, 'page_view'),
    ).toBe(`{"a":${'['.repeat(31)}${']'.repeat(31)}}`);
  });
});

describe('POST /api/v1/widget/leads', () => {
  test('stores a lead with consent', async ({ post, init, db }) => {
    const { token } = await init({ workspace: 'acme', page_url: 'https://shop.test/contact' });
    const reply = await post(
      '/api/v1/widget/leads',
      { name: 'Ann Lee', email: 'ann@example.com', message: 'Call me', consent: true },
      bearer(token),
    );
    expect(reply.status).toBe(201);
    expect(reply.headers['x-ratelimit-limit']).toBe('30');
    expect(reply.json()).toEqual({
      lead: {
        id: expect.any(Number),
        name: 'Ann Lee',
        email: 'ann@example.com',
        message: 'Call me',
        consent: true,
        created_at: TIMESTAMP,
      },
    });
    const { id } = (reply.json() as { lead: { id: number } }).lead;
    expect(db.prepare('SELECT page_url FROM widget_leads WHERE id = ?').get(id)).toEqual({
      page_url: 'https://shop.test/contact',
    });
  });
});

describe('typing and satisfaction', () => {
  test('POST /typing answers 204 with no body', async ({ post, init }) => {
    const { token } = await init();
    const reply = await post('/api/v1/widget/typing', { typing: true }, bearer(token));
    expect(reply.status).toBe(204);
    expect(reply.text).toBe('');
    expect(reply.headers['x-ratelimit-limit']).toBe('600');
    const stop = await post('/api/v1/widget/typing', { typing: false }, bearer(token));
    expect(stop.status).toBe(204);
    const bad = await post('/api/v1/widget/typing', { typing: 'perhaps' }, bearer(token));
    expect(bad.status).toBe(422);
    expect(bad.json()).toEqual(invalid({ typing: ['The typing field must be true or false.'] }));
  });

  test('POST /satisfaction keeps one rating per conversation, the latest', async ({ post, init, db }) => {
    const { token, session_id } = await init();
    const first = await post('/api/v1/widget/satisfaction', { rating: 2 }, bearer(token));
    expect(first.status).toBe(200);
    expect(first.json()).toEqual({ satisfaction: { rating: 2, comment: null, updated_at: TIMESTAMP } });
    const second = await post(
      '/api/v1/widget/satisfaction',
      { rating: 5, comment: 'Quick help' },
      bearer(token),
    );
    expect(second.json()).toEqual({
      satisfaction: { rating: 5, comment: 'Quick help', updated_at: TIMESTAMP },
    });
    expect(
      db.prepare('SELECT rating, comment FROM widget_satisfaction WHERE session_id = ?').all(session_id),
    ).toEqual([{ rating: 5, comment: 'Quick help' }]);
    const bad = await post(
      '/api/v1/widget/satisfaction',
      { rating: 6, comment: 'x'.repeat(2001) },
      bearer(token),
    );
    expect(bad.status).toBe(422);
    expect(bad.json()).toEqual(
      invalid({
        rating: ['The rating field must be an integer between 1 and 5.'],
        comment: ['The comment field must not be greater than 2000 characters.'],
      }),
    );
  });
});

describe('POST /api/v1/widget/coupon/apply', () => {
  test('a synced coupon of the workspace gives its discount (code case-insensitive)', async ({
    post,
    init,
  }) => {
    const { token } = await init();
    const reply = await post('/api/v1/widget/coupon/apply', { code: ' save10 ' }, bearer(token));
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({
      coupon: { code: 'SAVE10', discount_type: 'percent', amount: 10, expires_at: null },
    });
    const fixed = await post('/api/v1/widget/coupon/apply', { code: 'FIVEOFF' }, bearer(token));
    expect(fixed.json()).toEqual({
      coupon: { code: 'FIVEOFF', discount_type: 'fixed', amount: 5, expires_at: '2999-01-01T00:00:00.000Z' },
    });
  });

  test('unknown (or another workspace’s), expired and used-up coupons are refused with a reason', async ({
    post,
    init,
  }) => {
    const { token } = await init();
    const cases: [string, number, string, string][] = [
      ['NOPE', 404, 'coupon_not_found', 'This coupon code does not exist.'],
      ['GLOBEX', 404, 'coupon_not_found', 'This coupon code does not exist.'],
      ['OLD', 422, 'coupon_expired', 'This coupon has expired.'],
      ['usedup', 422, 'coupon_usage_limit_reached', 'This coupon has reached its usage limit.'],
    ];
    for (const [code, status, errorCode, message] of cases) {
      const reply = await post('/api/v1/widget/coupon/apply', { code }, bearer(token));
      expect(reply.status, code).toBe(status);
      expect(reply.json()).toEqual({ error: { code: errorCode, message } });
    }
    const missing = await post('/api/v1/widget/coupon/apply', {}, bearer(token));
    expect(missing.json()).toEqual(invalid({ code: ['The code field is required.'] }));
  });
});

describe('DELETE /api/v1/widget/me', () => {
  test('erases the visitor’s data; the token then stops working', async ({
    post,
    init,
    rows,
    gateway,
    db,
  }) => {
    const { token, session_id } = await init();
    await post('/api/v1/widget/messages', { body: 'forget me' }, bearer(token));
    await post('/api/v1/widget/events', { events: [{ type: 'open' }] }, bearer(token));
    await post('/api/v1/widget/leads', { name: 'A', email: 'a@example.com', consent: 'yes' }, bearer(token));
    await post('/api/v1/widget/satisfaction', { rating: 3 }, bearer(token));
    const tables = ['widget_messages', 'widget_events', 'widget_leads', 'widget_satisfaction'];
    expect(tables.map((t) => rows(t, session_id))).toEqual([1, 1, 1, 1]);

    const erased = await send(`${gateway.url()}/api/v1/widget/me`, {
      method: 'DELETE',
      headers: bearer(token),
    });
    expect(erased.status).toBe(200);
    expect(erased.json()).toEqual({ erased: true });
    expect(erased.headers['x-ratelimit-limit']).toBe('300');
    expect(tables.map((t) => rows(t, session_id))).toEqual([0, 0, 0, 0]);
    expect(db.prepare('SELECT count(*) AS n FROM widget_sessions WHERE id = ?').get(session_id)).toEqual({
      n: 0,
    });

    const gone = {
      error: {
        code: 'invalid_token',
        message: 'The visitor session no longer exists. Call init for a new one.',
      },
    };
    const afterwards = await post('/api/v1/widget/messages', { body: 'still there?' }, bearer(token));
    expect(afterwards.status).toBe(401);
    expect(afterwards.json()).toEqual(gone);
    const again = await send(`${gateway.url()}/api/v1/widget/me`, {
      method: 'DELETE',
      headers: bearer(token),
    });
    expect(again.status).toBe(401);
    expect(again.json()).toEqual(gone);
    expect((await init({ workspace: 'acme' }, bearer(token))).resumed).toBe(false);
  });
});

test('an unknown widget path is a 404 in the widget shape', async ({ gateway }) => {
  const reply = await send(`${gateway.url()}/api/v1/widget/config`);
  expect(reply.status).toBe(404);
  expect(reply.json()).toEqual({ error: { code: 'not_found', message: 'Resource not found.' } });
});

test('the OpenAPI fragment describes exactly the routes the service registers', async ({ db, dataDir }) => {
  const config = servicesConfigFrom(
    loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', embeddedEnv(dataDir)).config,
  );
  const app = createServiceApp({ logger: silentLogger, errors: widgetErrors, bodyLimit: 1024 });
  const registered: string[] = [];
  app.addHook('onRoute', (route) => {
    // The inbox page is HTML (docs/services/widget.md), not in the OpenAPI document.
    if (route.config?.page) return;
    for (const method of [route.method].flat())
      registered.push(`${method} ${route.url.replace(/:(\w+)/g, '{$1}')}`);
  });
  await widgetService.register(app, { db, config, logger: silentLogger });
  await app.ready();
  await app.close();
  const documented = Object.entries(widgetService.openapi.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
  );
  expect(registered.sort()).toEqual(documented.sort());
  expect(documented).toHaveLength(20);
});
