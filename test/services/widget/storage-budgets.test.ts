// The widget's storage budgets, end to end: the shipped config's per-address limiters (tuned by their
// environment variables), the service's per-workspace budgets, a real Redis, the SQLite file.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import { describe, expect } from 'vitest';
import type { Gateway } from '../../../src/runtime/gateway.js';
import { burst } from '../../helpers/burst.js';
import { expectLimited } from '../../helpers/clients.js';
import { DEFAULT_CONFIG } from '../../helpers/default-config.js';
import { dataDirWithWorkspaces, embeddedEnv } from '../../helpers/embedded.js';
import { test as base, type GatewayLauncher } from '../../helpers/fixtures.js';
import { send, type Reply } from '../../helpers/gateway.js';
import type { RedisServer } from '../../helpers/redis-server.js';

const SESSIONS_IP = 'Too many new widget conversations from this address. Please try again later.';
const STORED_IP = 'Too many widget messages from this address. Please slow down.';
const WORKSPACE_BODY = JSON.stringify({
  error: {
    code: 'workspace_budget_exceeded',
    message:
      'This workspace has reached its limit of new conversations and messages for now. Please try again later.',
  },
});

/** A gateway of the shipped config over a fresh database holding workspaces a to d. */
async function gatewayWith(
  { redis, gateways }: { redis: RedisServer; gateways: GatewayLauncher },
  env: Record<string, string>,
): Promise<{ gateway: Gateway; pool: Pool; dataDir: string }> {
  const dataDir = dataDirWithWorkspaces('a', 'b', 'c', 'd');
  const gateway = await gateways.start(
    DEFAULT_CONFIG,
    embeddedEnv(dataDir, {
      REDIS_URL: redis.url,
      TRUSTED_PROXIES: '127.0.0.1',
      ...env,
    }),
  );
  return { gateway, pool: new Pool(gateway.url(), { connections: 16, pipelining: 1 }), dataDir };
}

function client(gateway: Gateway, pool: Pool) {
  const post = (path: string, headers: Record<string, string>, body?: unknown): Promise<Reply> =>
    send(`${gateway.url()}${path}`, {
      method: 'POST',
      dispatcher: pool,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const init = (workspace: string, ip: string, token?: string) =>
    post(
      '/api/v1/widget/init',
      token ? { 'x-forwarded-for': ip, authorization: `Bearer ${token}` } : { 'x-forwarded-for': ip },
      { workspace },
    );
  /** A new session's headers for its later requests. */
  const visitor = async (workspace: string, ip: string) => {
    const reply = await init(workspace, ip);
    expect(reply.status).toBe(200);
    const { token } = reply.json() as { token: string };
    return { token, headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': ip } };
  };
  return { post, init, visitor };
}

const test = base
  .extend('c', { scope: 'file' }, async ({ redis, gateways }, { onCleanup }) => {
    const { gateway, pool } = await gatewayWith(
      { redis, gateways },
      {
        WIDGET_SESSIONS_PER_IP_HOUR: '4',
        WIDGET_STORED_PER_IP_MINUTE: '5',
        WIDGET_SESSIONS_PER_WORKSPACE: '6',
        WIDGET_STORED_PER_WORKSPACE: '8',
      },
    );
    onCleanup(() => pool.close());
    return client(gateway, pool);
  })
  .extend('wal', { scope: 'file' }, async ({ redis, gateways }, { onCleanup }) => {
    const wal = await gatewayWith(
      { redis, gateways },
      {
        WIDGET_STORED_PER_IP_MINUTE: '100000',
        WIDGET_STORED_PER_IP_HOUR: '100000',
        // No other write between two messages that could run the log's hook in their stead.
        WIDGET_STORED_PER_WORKSPACE: '0',
      },
    );
    onCleanup(() => wal.pool.close());
    return wal;
  });

describe('per address and per workspace', () => {
  test('what every session of one address stores shares one budget: messages, events, leads', async ({
    c,
  }) => {
    const ip = '192.0.2.1';
    const [one, two] = [await c.visitor('a', ip), await c.visitor('a', ip)];
    expect((await c.post('/api/v1/widget/messages', one.headers, { body: 'a' })).status).toBe(201);
    expect((await c.post('/api/v1/widget/messages', two.headers, { body: 'b' })).status).toBe(201);
    expect(
      (await c.post('/api/v1/widget/events', one.headers, { events: [{ type: 'page_view' }] })).status,
    ).toBe(202);
    const lead = { name: 'Ann', email: 'ann@example.com', consent: true };
    expect((await c.post('/api/v1/widget/leads', two.headers, lead)).status).toBe(201);
    const fifth = await c.post('/api/v1/widget/messages', two.headers, { body: 'c' });
    expect(fifth.status).toBe(201);
    expect(fifth.headers['x-ratelimit-limit']).toBe('5');
    expect(fifth.headers['x-ratelimit-remaining']).toBe('0');
    // A third session of the same address starts with the address's spent budget.
    const three = await c.visitor('a', ip);
    expectLimited(await c.post('/api/v1/widget/messages', three.headers, { body: 'd' }), 5, STORED_IP, 60);
    expectLimited(
      await c.post('/api/v1/widget/events', one.headers, { events: [{ type: 'open' }] }),
      5,
      STORED_IP,
      60,
    );
    expectLimited(await c.post('/api/v1/widget/leads', one.headers, lead), 5, STORED_IP, 60);
    // Another address is not affected.
    const other = await c.visitor('a', '192.0.2.2');
    expect((await c.post('/api/v1/widget/messages', other.headers, { body: 'e' })).status).toBe(201);
  });

  test('new sessions from one address are bounded per hour; a resumed one is not new', async ({ c }) => {
    const ip = '192.0.2.10';
    const first = await c.visitor('b', ip);
    for (let i = 0; i < 3; i++) await c.visitor('b', ip);
    const refused = await c.init('b', ip);
    expectLimited(refused, 4, SESSIONS_IP, 3600);
    expect((await c.init('b', '192.0.2.11')).status).toBe(200);
    // The gateway counts inits: a resume from the spent address is refused as well, with the same answer.
    expectLimited(await c.init('b', ip, first.token), 4, SESSIONS_IP, 3600);
  });

  test('a workspace starts a bounded number of new sessions, whatever the addresses', async ({ c }) => {
    const first = await c.visitor('c', '203.0.113.1');
    for (let i = 2; i <= 6; i++) await c.visitor('c', `203.0.113.${i}`);
    const refused = await c.init('c', '203.0.113.7');
    expect(refused.status).toBe(429);
    expect(refused.text).toBe(WORKSPACE_BODY);
    expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    // The gateway's windows passed it (the address's first init: 3 of 4 left).
    expect(refused.headers['x-ratelimit-limit']).toBe('4');
    expect(refused.headers['x-ratelimit-remaining']).toBe('3');
    // Resuming a session starts nothing new; another workspace has its own budget.
    const resumed = await c.init('c', '203.0.113.1', first.token);
    expect(resumed.status).toBe(200);
    expect((resumed.json() as { resumed: boolean }).resumed).toBe(true);
    expect((await c.init('d', '203.0.113.7')).status).toBe(200);
  });

  test("what a workspace's visitors store is bounded, events counting one each", async ({ c }) => {
    const visitors = await Promise.all(
      ['198.51.100.1', '198.51.100.2', '198.51.100.3'].map((ip) => c.visitor('d', ip)),
    );
    for (const v of visitors) {
      expect((await c.post('/api/v1/widget/messages', v.headers, { body: 'hi' })).status).toBe(201);
    }
    const three = [{ type: 'page_view' }, { type: 'open' }, { type: 'close' }];
    expect((await c.post('/api/v1/widget/events', visitors[0]!.headers, { events: three })).status).toBe(202);
    // 6 of 8 spent: three more events do not fit, two do.
    const tooMany = await c.post('/api/v1/widget/events', visitors[1]!.headers, { events: three });
    expect(tooMany.status).toBe(429);
    expect(tooMany.text).toBe(WORKSPACE_BODY);
    expect(
      (await c.post('/api/v1/widget/events', visitors[1]!.headers, { events: three.slice(0, 2) })).status,
    ).toBe(202);
    const refused = await c.post('/api/v1/widget/messages', visitors[2]!.headers, { body: 'late' });
    expect(refused.status).toBe(429);
    expect(refused.text).toBe(WORKSPACE_BODY);
    // Nothing of the refused requests was stored.
    const page = await c.post('/api/v1/widget/conversation/messages', visitors[2]!.headers, {});
    expect((page.json() as { total: number }).total).toBe(1);
  });
});

describe('the write-ahead log', () => {
  test('a flood of messages through the widget API leaves the log at its bound, not growing', async ({
    wal: { gateway, pool, dataDir },
  }) => {
    const c = client(gateway, pool);
    const sessions = await Promise.all(
      Array.from({ length: 8 }, (_, i) => c.visitor('a', `10.0.0.${i + 1}`)),
    );
    const body = 'x'.repeat(3000);
    const replies = await burst(
      2000,
      (i) => c.post('/api/v1/widget/messages', sessions[i % sessions.length]!.headers, { body }),
      16,
    );
    expect(replies.filter((r) => r.status !== 201)).toEqual([]);
    // About 2,000 × 3 pages were written; SQLite's auto-checkpoint restarts the log every ~4 MB
    // (1000 pages), and journal_size_limit cuts it back to 4 MB: never the ~25 MB of a log that is
    // never checkpointed.
    const wal = statSync(join(dataDir, 'tollgate.db-wal')).size;
    expect(wal).toBeLessThanOrEqual(5 * 1024 * 1024);
    expect(statSync(join(dataDir, 'tollgate.db')).size).toBeGreaterThan(6 * 1024 * 1024);
  });
});
