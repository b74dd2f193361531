// draft-ietf-httpapi-ratelimit-headers-11 through a real gateway: the pk of the RateLimit field,
// the opt-in application/problem+json 429 (limitedBody: problem, hot-reloadable), and the
// upstream's own RateLimit / RateLimit-Policy kept, the gateway's policies appended (section 7.2).
import { createHash } from 'node:crypto';
import { describe, expect } from 'vitest';
import { hashPart } from '../../src/identity/hash.js';
import { windowKey } from '../../src/limits/plan.js';
import { loadConfigText } from '../../src/rules/load.js';
import { clientAddresses } from '../helpers/clients.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml, send, type Reply } from '../helpers/gateway.js';
import { parseList } from '../helpers/structured-fields.js';
import { startPlainServer } from '../helpers/upstream.js';

function config(body: 'problem' | 'error'): string {
  return gatewayYaml(
    `
store:
  redis: { url: '\${REDIS_URL}', commandTimeout: 2s }
identity:
  trustedProxies: [127.0.0.1]
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
  quoted: { url: '\${QUOTED_URL}' }
limiters:
  quota:
    limitedBody: ${body}
    message: Quota spent.
    windows:
      - { limit: 2, period: 1m, key: [ip] }
      - { limit: 3, period: 1h, key: [ip] }
  plain:
    windows: [{ limit: 5, period: 1m, key: [ip] }]
routes:
  - { name: quota, paths: ['/q/*'], upstream: app, limiters: [quota] }
  - { name: quoted, paths: ['/u/*'], upstream: quoted, limiters: [plain] }
  - { name: open, paths: ['/open/*'], upstream: quoted }
`,
    { listeners: [{ name: 'ietf', ietfHeaders: true }, { name: 'plain' }] },
  );
}

/** The upstream's own fields: RateLimit-Policy on two field lines, and the headers that never pass. */
const UPSTREAM_FIELDS = {
  ratelimit: '"up";r=9;t=30',
  'ratelimit-policy': ['"up";q=10;w=60', '"up-daily";q=1000;w=86400'],
  'x-ratelimit-limit': '999',
  'ratelimit-remaining': '9',
};

const test = serversTest
  .extend('quoted', { scope: 'file' }, async ({}, { onCleanup }) => {
    const server = await startPlainServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', ...UPSTREAM_FIELDS });
      res.end('quoted');
    });
    onCleanup(() => server.close());
    return server;
  })
  .extend('env', { scope: 'file' }, ({ gatewayEnv, quoted }) => ({ ...gatewayEnv, QUOTED_URL: quoted.url }))
  .extend('gateway', { scope: 'file' }, ({ env, gateways }) => gateways.start(config('problem'), env));

const newClient = clientAddresses();
const PROBLEM_TYPE = 'https://iana.org/assignments/http-problem-types#quota-exceeded';
const TITLE = 'Request cannot be satisfied as assigned quota has been exceeded';

/** The pk a window's store key gives: SHA-256, first 12 bytes, base64, between colons. */
const pkOf = (storeKey: string) =>
  `:${createHash('sha256').update(storeKey).digest().subarray(0, 12).toString('base64')}:`;

/** The RateLimit field with its t (checked: 0..max) replaced by "T", for an exact comparison. */
function withT(reply: Reply, max: number): string {
  const field = reply.headers['ratelimit'] ?? '';
  const ts = [...field.matchAll(/;t=(\d+)/g)].map((m) => Number(m[1]));
  for (const t of ts) expect(t >= 0 && t <= max, field).toBe(true);
  parseList(field); // a valid List
  return field.replace(/;t=\d+/g, ';t=T');
}

describe('the IETF fields and the problem+json 429', () => {
  test('RateLimit carries the pk of the reported window, the same for one client, another for the next', async ({
    gateway,
  }) => {
    const get = (ip: string) => send(`${gateway.url('ietf')}/q/a`, { headers: { 'x-forwarded-for': ip } });
    const key = (ip: string, index: number) =>
      windowKey('tg:', gateway.table.limiters.get('quota')!, index, () => hashPart(`ip=${ip}`));
    const ip = newClient();
    const first = await get(ip);
    expect(first.status).toBe(200);
    expect(first.headers['ratelimit-policy']).toBe('"quota.0";q=2;w=60, "quota.1";q=3;w=3600');
    expect(withT(first, 60)).toBe(`"quota.0";r=1;t=T;pk=${pkOf(key(ip, 0))}`);
    const second = await get(ip);
    expect(withT(second, 60)).toBe(`"quota.0";r=0;t=T;pk=${pkOf(key(ip, 0))}`);
    const other = newClient();
    const third = await get(other);
    expect(withT(third, 60)).toBe(`"quota.0";r=1;t=T;pk=${pkOf(key(other, 0))}`);
    expect(pkOf(key(other, 0))).not.toBe(pkOf(key(ip, 0)));
    // The raw address is nowhere in the fields.
    expect(JSON.stringify(third.headers)).not.toContain(other);
  });

  test('limitedBody: problem answers an exact application/problem+json 429, on either listener', async ({
    gateway,
  }) => {
    const ip = newClient();
    for (let i = 0; i < 2; i++) {
      expect((await send(`${gateway.url('ietf')}/q/b`, { headers: { 'x-forwarded-for': ip } })).status).toBe(
        200,
      );
    }
    for (const listener of ['ietf', 'plain']) {
      const refused = await send(`${gateway.url(listener)}/q/b`, { headers: { 'x-forwarded-for': ip } });
      expect(refused.status).toBe(429);
      expect(refused.headers['content-type']).toBe('application/problem+json');
      expect(refused.text).toBe(
        JSON.stringify({
          type: PROBLEM_TYPE,
          title: TITLE,
          status: 429,
          detail: 'Quota spent.',
          'violated-policies': ['quota.0'],
        }),
      );
      expect(refused.headers['content-length']).toBe(String(Buffer.byteLength(refused.text)));
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
      expect(refused.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    }
  });

  test('violated-policies names every spent window', async ({ gateway, redisClient }) => {
    const ip = newClient();
    const limiter = gateway.table.limiters.get('quota')!;
    const key = (index: number) => windowKey('tg:', limiter, index, () => hashPart(`ip=${ip}`));
    await redisClient.set(key(0), 2, 'PX', 60_000);
    await redisClient.set(key(1), 3, 'PX', 3_600_000);
    const refused = await send(`${gateway.url('ietf')}/q/c`, { headers: { 'x-forwarded-for': ip } });
    expect(refused.status).toBe(429);
    expect(refused.json()).toEqual({
      type: PROBLEM_TYPE,
      title: TITLE,
      status: 429,
      detail: 'Quota spent.',
      'violated-policies': ['quota.0', 'quota.1'],
    });
    // The RateLimit field reports the window whose retry passes last: the hour.
    expect(withT(refused, 3600)).toBe(`"quota.1";r=0;t=T;pk=${pkOf(key(1))}`);
  });

  test("the upstream's RateLimit and RateLimit-Policy come first, the gateway's appended", async ({
    gateway,
  }) => {
    const ip = newClient();
    const key = windowKey('tg:', gateway.table.limiters.get('plain')!, 0, () => hashPart(`ip=${ip}`));
    const reply = await send(`${gateway.url('ietf')}/u/a`, { headers: { 'x-forwarded-for': ip } });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('quoted');
    expect(reply.headers['ratelimit-policy']).toBe(
      '"up";q=10;w=60, "up-daily";q=1000;w=86400, "plain.0";q=5;w=60',
    );
    expect(withT(reply, 60)).toBe(`"up";r=9;t=T, "plain.0";r=4;t=T;pk=${pkOf(key)}`);
    expect(reply.headers['x-ratelimit-limit']).toBe('5'); // the gateway's, not the upstream's 999
    expect(reply.headers['ratelimit-remaining']).toBeUndefined(); // the older draft's field never passes

    // Without ietfHeaders, and on a route without limiters: the upstream's fields as they came.
    for (const url of [`${gateway.url('plain')}/u/b`, `${gateway.url('ietf')}/open/c`]) {
      const passed = await send(url, { headers: { 'x-forwarded-for': ip } });
      expect(passed.status).toBe(200);
      expect(passed.headers['ratelimit']).toBe('"up";r=9;t=30');
      expect(passed.headers['ratelimit-policy']).toBe('"up";q=10;w=60, "up-daily";q=1000;w=86400');
      expect(passed.headers['ratelimit-remaining']).toBeUndefined();
    }
    const open = await send(`${gateway.url('ietf')}/open/d`);
    expect(open.headers['x-ratelimit-limit']).toBeUndefined();
  });

  test('a reload to limitedBody: error brings back the exact default body, and back again', async ({
    gateway,
    env,
  }) => {
    const ip = newClient();
    const get = () => send(`${gateway.url('ietf')}/q/d`, { headers: { 'x-forwarded-for': ip } });
    for (let i = 0; i < 2; i++) expect((await get()).status).toBe(200);
    await gateway.reload(loadConfigText(config('error'), 'error.yaml', env));
    try {
      const refused = await get();
      expect(refused.status).toBe(429);
      expect(refused.headers['content-type']).toBe('application/json');
      expect(refused.text).toBe('{"error":{"code":"rate_limited","message":"Quota spent."}}');
    } finally {
      await gateway.reload(loadConfigText(config('problem'), 'problem.yaml', env));
    }
    const again = await get();
    expect(again.status).toBe(429);
    expect(again.headers['content-type']).toBe('application/problem+json');
  });
});
