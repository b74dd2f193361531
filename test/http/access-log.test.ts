// The access log of both listener kinds: one line per request with the client address resolved for
// limiting, and the health checks at debug, so probes do not fill an info log.
import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import type { Gateway } from '../../src/runtime/gateway.js';
import { gatewayTest } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { waitFor } from '../helpers/wait.js';

const log = capturingLogger('debug');
const test = gatewayTest({
  redis: false,
  config: gatewayYaml(
    `
identity: { trustedProxies: 127.0.0.1 }
upstreams: { app: { url: "\${UPSTREAM_URL}" } }
limiters:
  two: { windows: [{ limit: 2, period: 1m, key: [ip] }] }
routes:
  - { name: limited, paths: [/limited/*], upstream: app, limiters: [two] }
  - { name: open, paths: [/open/*], upstream: app }
`,
    { listeners: [{ name: 'public' }, { name: 'decision', mode: 'decision' }] },
  ),
  options: { logger: log.logger },
});

/** The fields pino adds to every line. */
const BASE = { time: expect.any(Number), pid: process.pid, hostname: expect.any(String) };

/** The access line of the request sent with X-Request-Id `id`, once its response has closed. */
async function accessLine(id: string): Promise<Record<string, unknown>> {
  const lines = await waitFor(
    () => log.lines.filter((l) => l['reqId'] === id),
    (found) => found.length > 0,
    { what: `the access line of ${id}`, timeoutMs: 20_000 },
  );
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

/** Sends GET `path` to `listener` with a fresh X-Request-Id (and `headers`); its id and status. */
async function get(
  gateway: Gateway,
  path: string,
  headers: Record<string, string> = {},
  listener = 'public',
): Promise<{ id: string; status: number }> {
  const id = randomUUID();
  const reply = await send(`${gateway.url(listener)}${path}`, {
    headers: { 'x-request-id': id, ...headers },
  });
  return { id, status: reply.status };
}

describe('a proxy listener', () => {
  test('logs the client address: the peer, or from a trusted peer the X-Forwarded-For walk, in full', async ({
    gateway,
  }) => {
    const direct = await get(gateway, '/open/a');
    const forwarded = await get(gateway, '/open/b', { 'x-forwarded-for': '198.51.100.9, 203.0.113.7' });
    // An IPv6 client is logged whole, though its limiters count its /64.
    const v6 = await get(gateway, '/open/c?q=1', { 'x-forwarded-for': '2001:db8:1:2:3:4:5:6' });
    const line = { level: 30, ...BASE, method: 'GET', status: 200, route: 'open', limit: 'unlimited' };
    expect(await accessLine(direct.id)).toEqual({
      ...line,
      reqId: direct.id,
      path: '/open/a',
      client: '127.0.0.1',
      ms: expect.any(Number),
    });
    expect(await accessLine(forwarded.id)).toEqual({
      ...line,
      reqId: forwarded.id,
      path: '/open/b',
      client: '203.0.113.7',
      ms: expect.any(Number),
    });
    expect(await accessLine(v6.id)).toEqual({
      ...line,
      reqId: v6.id,
      path: '/open/c',
      client: '2001:db8:1:2:3:4:5:6',
      ms: expect.any(Number),
    });
  });

  test('tells who was limited: the 429 line names the client the limiter counted', async ({ gateway }) => {
    const client = { 'x-forwarded-for': '192.0.2.44' };
    const replies = [];
    for (let i = 0; i < 3; i++) replies.push(await get(gateway, '/limited/x', client));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 429]);
    const line = {
      level: 30,
      ...BASE,
      method: 'GET',
      path: '/limited/x',
      route: 'limited',
      client: '192.0.2.44',
    };
    expect(await accessLine(replies[0]!.id)).toEqual({
      ...line,
      reqId: replies[0]!.id,
      status: 200,
      limit: 'allowed',
      ms: expect.any(Number),
    });
    expect(await accessLine(replies[2]!.id)).toEqual({
      ...line,
      reqId: replies[2]!.id,
      status: 429,
      limit: 'limited',
      ms: expect.any(Number),
    });
  });

  test('logs /healthz and /readyz at debug, not info; a 404 stays at info', async ({ gateway }) => {
    const healthz = await get(gateway, '/healthz');
    const readyz = await get(gateway, '/readyz', { 'x-forwarded-for': '203.0.113.8' });
    const missing = await get(gateway, '/nowhere');
    expect([healthz.status, readyz.status, missing.status]).toEqual([200, 200, 404]);
    const probe = {
      level: 20,
      ...BASE,
      method: 'GET',
      status: 200,
      limit: 'unlimited',
      ms: expect.any(Number),
    };
    expect(await accessLine(healthz.id)).toEqual({
      ...probe,
      reqId: healthz.id,
      path: '/healthz',
      client: '127.0.0.1',
    });
    expect(await accessLine(readyz.id)).toEqual({
      ...probe,
      reqId: readyz.id,
      path: '/readyz',
      client: '203.0.113.8',
    });
    expect(await accessLine(missing.id)).toEqual({
      level: 30,
      ...BASE,
      reqId: missing.id,
      method: 'GET',
      path: '/nowhere',
      client: '127.0.0.1',
      status: 404,
      limit: 'unlimited',
      ms: expect.any(Number),
    });
  });
});

describe('a decision listener', () => {
  test('logs the original request and its client, marked decision', async ({ gateway }) => {
    const asked = await get(
      gateway,
      '/',
      { 'x-forwarded-method': 'POST', 'x-forwarded-uri': '/limited/y?z=1', 'x-forwarded-for': '203.0.113.9' },
      'decision',
    );
    expect(asked.status).toBe(200);
    expect(await accessLine(asked.id)).toEqual({
      level: 30,
      ...BASE,
      reqId: asked.id,
      decision: true,
      method: 'POST',
      path: '/limited/y',
      client: '203.0.113.9',
      status: 200,
      route: 'limited',
      limit: 'allowed',
      ms: expect.any(Number),
    });
  });

  test('logs its health checks at debug', async ({ gateway }) => {
    const healthz = await get(gateway, '/healthz', {}, 'decision');
    const readyz = await get(gateway, '/readyz', {}, 'decision');
    expect([healthz.status, readyz.status]).toEqual([200, 200]);
    for (const [probe, path] of [
      [healthz, '/healthz'],
      [readyz, '/readyz'],
    ] as const) {
      expect(await accessLine(probe.id)).toEqual({
        level: 20,
        ...BASE,
        reqId: probe.id,
        decision: true,
        method: 'GET',
        path,
        client: '127.0.0.1',
        status: 200,
        limit: 'unlimited',
        ms: expect.any(Number),
      });
    }
  });
});
