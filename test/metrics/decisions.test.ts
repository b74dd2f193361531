// Issue 22: every answer is counted (tollgate_requests_total) and logged ("limit") under what
// really came of it. A refusal that follows counting is never "allowed", and a cap's 429 carries
// no window headers that contradict it.
import { describe, expect } from 'vitest';
import { request } from 'undici';
import { capturingLogger } from '../helpers/log-capture.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';
import { sampleValue, scrape } from '../helpers/prometheus.js';
import { RawClient } from '../helpers/raw-client.js';
import { sendAsIs } from '../helpers/send-as-is.js';
import { TEST_JWT_SECRET, visitorJwt } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait.js';

const CONFIG = gatewayYaml(
  `
store:
  redis: { url: '\${REDIS_URL}', commandTimeout: 2s }
identity:
  jwt: { secret: '${TEST_JWT_SECRET}', algorithms: [HS256], issuer: tollgate, audience: tollgate-widget }
requests:
  maxBodySize: 16b
  bodyTimeout: 1s
streams: { maxPerSession: 1 }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  visitor:
    windows: [{ limit: 100, period: 1m, key: [jwt] }]
  per-ip:
    windows: [{ limit: 100, period: 1m, key: [ip] }]
routes:
  - { name: visitor, paths: ['/v/*'], upstream: app, limiters: [visitor] }
  - { name: hang, paths: ['/hang'], upstream: app, stream: true, limiters: [visitor] }
  - { name: open, paths: ['/*'], upstream: app, limiters: [per-ip] }
`,
  { admin: true },
);

const test = serversTest
  .extend('log', { scope: 'file' }, () => capturingLogger('info'))
  .extend('gateway', { scope: 'file' }, ({ gatewayEnv, gateways, log }) =>
    gateways.start(CONFIG, gatewayEnv, { logger: log.logger }),
  );

const decision = async (adminUrl: string, limiter: string, d: string) =>
  sampleValue(await scrape(adminUrl), `tollgate_requests_total{limiter="${limiter}",decision="${d}"}`);

/** The access-log line of the request with this id, once written (at the response's close). */
async function accessLine(lines: Record<string, unknown>[], reqId: string): Promise<Record<string, unknown>> {
  const line = () => lines.find((l) => l['reqId'] === reqId && l['status'] !== undefined);
  return (await waitFor(line, (l) => l !== undefined, { what: `the access line of ${reqId}` }))!;
}

describe('decisions that tell the truth', () => {
  test('a missing visitor token: 401, counted and logged unauthorized, never allowed', async ({
    gateway,
    log,
  }) => {
    const reply = await send(`${gateway.url()}/v/messages`, {
      method: 'POST',
      headers: { 'x-request-id': 'no-token-1' },
    });
    expect(reply.status).toBe(401);
    expect(reply.json()).toEqual({ error: { code: 'missing_token', message: 'Visitor token missing.' } });
    expect(await decision(gateway.adminUrl!, 'visitor', 'unauthorized')).toBe(1);
    expect(await decision(gateway.adminUrl!, 'visitor', 'allowed')).toBeUndefined();
    expect((await accessLine(log.lines, 'no-token-1'))['limit']).toBe('unauthorized');
  });

  test('a valid token is allowed, and logged so', async ({ gateway, log }) => {
    const token = await visitorJwt('s-allowed');
    const reply = await send(`${gateway.url()}/v/messages`, {
      headers: { authorization: `Bearer ${token}`, 'x-request-id': 'allowed-1' },
    });
    expect(reply.status).toBe(200);
    expect(await decision(gateway.adminUrl!, 'visitor', 'allowed')).toBe(1);
    expect((await accessLine(log.lines, 'allowed-1'))['limit']).toBe('allowed');
  });

  test('a declared body over the bound: 413, counted body_too_large', async ({ gateway, log }) => {
    const reply = await send(`${gateway.url()}/big`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'x-request-id': 'big-1' },
      body: 'x'.repeat(17),
    });
    expect(reply.status).toBe(413);
    expect(await decision(gateway.adminUrl!, 'per-ip', 'body_too_large')).toBe(1);
    expect((await accessLine(log.lines, 'big-1'))['limit']).toBe('body_too_large');
  });

  test('a body that stops coming: 408, counted and logged body_timeout', async ({ gateway, log }) => {
    const client = await RawClient.open(gateway.url());
    client.head('POST', '/slow', { 'content-length': 10, 'x-request-id': 'late-1' });
    client.write('x');
    const reply = await client.response();
    client.socket.destroy();
    expect(reply.status).toBe(408);
    expect(await decision(gateway.adminUrl!, 'per-ip', 'body_timeout')).toBe(1);
    expect(await decision(gateway.adminUrl!, 'per-ip', 'allowed')).toBeUndefined();
    expect((await accessLine(log.lines, 'late-1'))['limit']).toBe('body_timeout');
  });

  test('a Connection header naming the credential: 400, counted invalid_target', async ({ gateway }) => {
    const token = await visitorJwt('s-connection');
    const reply = await sendAsIs(`${gateway.url()}/v/c`, {
      headers: { connection: 'authorization', authorization: `Bearer ${token}` },
    });
    expect(reply.status).toBe(400);
    expect(await decision(gateway.adminUrl!, 'visitor', 'invalid_target')).toBe(1);
  });

  test("a session's second stream: 429 too_many_streams, with no window headers, counted too_many_streams", async ({
    gateway,
    upstream,
  }) => {
    const token = await visitorJwt('s-streams');
    const headers = { authorization: `Bearer ${token}` };
    const first = new AbortController();
    const held = request(`${gateway.url()}/hang`, { headers, signal: first.signal }).catch(() => undefined);
    const hungBefore = upstream.hung;
    await waitFor(
      () => upstream.hung,
      (n) => n > hungBefore,
      { what: 'the first stream upstream' },
    );
    const second = await send(`${gateway.url()}/hang`, { headers: { ...headers, 'x-request-id': 'second' } });
    first.abort();
    await held;
    expect(second.status).toBe(429);
    expect(second.json()).toEqual({
      error: {
        code: 'too_many_streams',
        message: 'This visitor session already holds 1 open event streams. Close one before opening another.',
      },
    });
    expect(second.headers['retry-after']).toBe('5');
    expect(second.headers['x-ratelimit-remaining']).toBeUndefined();
    expect(second.headers['x-ratelimit-limit']).toBeUndefined();
    expect(second.headers['x-ratelimit-reset']).toBeUndefined();
    expect(await decision(gateway.adminUrl!, 'visitor', 'too_many_streams')).toBe(1);
  });
});
