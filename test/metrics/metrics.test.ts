// Prometheus metrics on the admin listener, after known traffic through the real gateway and Redis.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { reloadFromFile } from '../../src/cli/reloader.js';
import { loadConfigText } from '../../src/rules/load.js';
import { hashPart } from '../../src/identity/hash.js';
import { windowKey } from '../../src/limits/plan.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml, limitHeaders, send, silentLogger } from '../helpers/gateway.js';
import { freePort } from '../helpers/ports.js';
import { sampleValue, samples, scrape } from '../helpers/prometheus.js';

/** Literal URLs (no ${VAR}), so the same text also serves as a config file for reloadFromFile. */
function config(redisUrl: string, upstreamUrl: string, deadUrl: string): string {
  return gatewayYaml(
    `
store:
  redis: { url: '${redisUrl}', commandTimeout: 2s }
identity:
  trustedProxies: [127.0.0.1]
upstreams:
  app: { url: '${upstreamUrl}' }
  gone: { url: '${deadUrl}' }
limiters:
  a:
    windows: [{ limit: 3, period: 1m, key: [ip] }]
  s:
    shadow: true
    windows: [{ limit: 1, period: 1m, key: [ip] }]
  b:
    windows: [{ limit: 100, period: 1m, key: [ip, user_agent, 'header:Authorization'] }]
routes:
  - { name: limited, paths: ['/a/*'], upstream: app, limiters: [a] }
  - { name: shadowed, paths: ['/s/*'], upstream: app, limiters: [s] }
  - { name: keyed, paths: ['/k/*'], upstream: app, limiters: [b] }
  - { name: status, paths: ['/status/*'], upstream: app }
  - { name: dead, paths: ['/dead/*'], upstream: gone }
`,
    { admin: true },
  );
}

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const ROUTE_NOT_FOUND = '{"error":{"code":"route_not_found","message":"No route matches this request."}}';

/** `text`: the config (its dead upstream a port nothing listens on: the connection is refused). */
const test = serversTest
  .extend('dir', { scope: 'file' }, async ({}, { onCleanup }) => {
    const dir = await mkdtemp(join(tmpdir(), 'tollgate-metrics-'));
    onCleanup(() => rm(dir, { recursive: true, force: true }));
    return dir;
  })
  .extend('text', { scope: 'file' }, async ({ redis, upstream }) =>
    config(redis.url, upstream.url, `http://127.0.0.1:${await freePort()}`),
  )
  .extend('gateway', { scope: 'file' }, ({ text, gateways }) => gateways.start(text))
  /** Helpers on the file's gateway. */
  .extend(
    'get',
    { scope: 'file' },
    ({ gateway }) =>
      (path: string, headers: Record<string, string> = {}) =>
        send(`${gateway.url()}${path}`, { headers }),
  )
  .extend(
    'metrics',
    { scope: 'file' },
    ({ gateway }) =>
      () =>
        scrape(gateway.adminUrl!),
  )
  .extend('only', { scope: 'file' }, ({ upstream, gateways }) =>
    gateways.start(
      gatewayYaml(
        `
upstreams:
  app: { url: '${upstream.url}' }
routes:
  - { name: x, paths: [/x], upstream: app }
`,
        { admin: true },
      ),
    ),
  );

describe('GET /metrics on the admin listener', () => {
  test('before any traffic: the reload counters at 0, no request samples', async ({ gateway }) => {
    const reply = await send(`${gateway.adminUrl}/metrics`);
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe(CONTENT_TYPE);
    expect(samples(reply.text, 'tollgate_config_reloads_total')).toEqual([
      'tollgate_config_reloads_total{result="success"} 0',
      'tollgate_config_reloads_total{result="failure"} 0',
    ]);
    expect(samples(reply.text, 'tollgate_store_errors_total')).toEqual(['tollgate_store_errors_total 0']);
    expect(samples(reply.text, 'tollgate_in_flight')).toEqual([
      'tollgate_in_flight{kind="requests"} 0',
      'tollgate_in_flight{kind="streams"} 0',
    ]);
    expect(samples(reply.text, 'tollgate_requests_total')).toEqual([]);
    expect(samples(reply.text, 'tollgate_upstream_responses_total')).toEqual([]);
    expect(sampleValue(reply.text, 'tollgate_store_duration_seconds_count')).toBe(0);
    // Process metrics come along (prom-client defaults).
    expect(reply.text).toContain('# TYPE process_cpu_user_seconds_total counter');
  });

  test('known traffic gives exact counts per limiter, decision, route, upstream and result', async ({
    get,
    metrics,
  }) => {
    const ipA = { 'x-forwarded-for': '198.51.100.1' };
    for (let i = 0; i < 3; i++) expect((await get('/a/x', ipA)).status).toBe(200);
    const refused = await get('/a/x', ipA);
    expect(refused.status).toBe(429);

    const ipS = { 'x-forwarded-for': '198.51.100.2' };
    for (let i = 0; i < 3; i++) {
      const reply = await get('/s/x', ipS);
      expect(reply.status).toBe(200);
      expect(limitHeaders(reply)).toEqual({});
    }

    expect((await get('/k/x', { 'x-forwarded-for': '198.51.100.3' })).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await get('/status/503')).status).toBe(503);
    const dead = await get('/dead/x');
    expect(dead.status).toBe(502);
    expect(dead.text).toBe(
      '{"error":{"code":"bad_gateway","message":"The upstream service is unavailable."}}',
    );

    const m = await metrics();
    expect(samples(m, 'tollgate_requests_total').sort()).toEqual(
      [
        'tollgate_requests_total{limiter="a",decision="allowed"} 3',
        'tollgate_requests_total{limiter="a",decision="limited"} 1',
        'tollgate_requests_total{limiter="s",decision="allowed"} 1',
        'tollgate_requests_total{limiter="s",decision="shadow_limited"} 2',
        'tollgate_requests_total{limiter="b",decision="allowed"} 1',
      ].sort(),
    );
    // The refused request was never forwarded, so "limited" has no upstream sample.
    expect(samples(m, 'tollgate_upstream_responses_total').sort()).toEqual(
      [
        'tollgate_upstream_responses_total{route="limited",upstream="app",result="2xx"} 3',
        'tollgate_upstream_responses_total{route="shadowed",upstream="app",result="2xx"} 3',
        'tollgate_upstream_responses_total{route="keyed",upstream="app",result="2xx"} 1',
        'tollgate_upstream_responses_total{route="status",upstream="app",result="5xx"} 2',
        'tollgate_upstream_responses_total{route="dead",upstream="gone",result="unreachable"} 1',
      ].sort(),
    );
    for (const [series, count] of [
      ['{route="limited",upstream="app"}', 3],
      ['{route="shadowed",upstream="app"}', 3],
      ['{route="status",upstream="app"}', 2],
      ['{route="dead",upstream="gone"}', 1],
    ] as const) {
      expect(sampleValue(m, `tollgate_upstream_duration_seconds_count${series}`)).toBe(count);
    }
    // One round trip per counted request: 3 for a (its refusal came from the over-limit cache), 3 for s, 1 for b.
    expect(sampleValue(m, 'tollgate_store_duration_seconds_count')).toBe(7);
    expect(sampleValue(m, 'tollgate_store_duration_seconds_bucket{le="+Inf"}')).toBe(7);
    expect(sampleValue(m, 'tollgate_store_errors_total')).toBe(0);
  });

  test('no label value carries a client IP, user agent, token or key hash', async ({
    gateway,
    get,
    metrics,
  }) => {
    const ip = '203.0.113.199';
    const agent = 'Distinctive-Agent/7.3 (metrics-leak-probe)';
    const token = 'Bearer tok-9f8e7d6c5b4a';
    const headers = { 'x-forwarded-for': ip, 'user-agent': agent, authorization: token };
    for (const path of ['/a/leak', '/s/leak', '/k/leak', '/k/leak']) {
      expect((await get(path, headers)).status).toBe(200);
    }
    const hashes: Record<string, string> = {
      ip: hashPart(`ip=${ip}`),
      user_agent: hashPart(`ua=${agent}`),
      'header:Authorization': hashPart(`h:authorization=${token}`),
    };
    const keyOfB = windowKey('tg:', gateway.table.limiters.get('b')!, 0, (p) => hashes[p]!);

    const m = await metrics();
    expect(sampleValue(m, 'tollgate_requests_total{limiter="b",decision="allowed"}')).toBe(3);
    for (const secret of [
      ip,
      agent,
      'Distinctive-Agent',
      token,
      'tok-9f8e7d6c5b4a',
      ...Object.values(hashes),
    ]) {
      expect(m).not.toContain(secret);
    }
    expect(m).not.toContain(keyOfB);
    expect(m).not.toContain('tg:');
    // Label names are limiter, decision, route, upstream, result, status, kind, window, bucket (and le) only.
    const labelNames = new Set(
      samples(m).flatMap((l) => [...l.matchAll(/([a-z_]+)="/g)].map((match) => match[1]!)),
    );
    expect([...labelNames].sort()).toEqual([
      'bucket',
      'decision',
      'kind',
      'le',
      'limiter',
      'result',
      'route',
      'status',
      'upstream',
      'window',
    ]);
  });

  test('reloads are counted by result', async ({ text, dir, gateway, metrics }) => {
    const before = samples(await metrics(), 'tollgate_requests_total');

    await gateway.reload(loadConfigText(text, 'same.yaml', {}));
    let m = await metrics();
    expect(samples(m, 'tollgate_config_reloads_total')).toEqual([
      'tollgate_config_reloads_total{result="success"} 1',
      'tollgate_config_reloads_total{result="failure"} 0',
    ]);
    // The counters live on across the reload.
    expect(samples(m, 'tollgate_requests_total')).toEqual(before);

    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, text.replace('upstream: gone', 'upstream: ghost'));
    expect(await reloadFromFile(gateway, bad, silentLogger)).toBe(false);
    const good = join(dir, 'good.yaml');
    await writeFile(good, text);
    expect(await reloadFromFile(gateway, good, silentLogger)).toBe(true);

    m = await metrics();
    expect(samples(m, 'tollgate_config_reloads_total')).toEqual([
      'tollgate_config_reloads_total{result="success"} 2',
      'tollgate_config_reloads_total{result="failure"} 1',
    ]);
  });

  test('the admin listener answers 404 JSON for other paths, 405 for other methods', async ({ gateway }) => {
    const admin = gateway.adminUrl!;
    expect(admin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(admin).not.toBe(gateway.url());

    const health = await send(`${admin}/healthz`);
    expect(health.status).toBe(200);
    expect(health.text).toBe('{"status":"ok"}');

    const withQuery = await send(`${admin}/metrics?name[]=tollgate_requests_total`);
    expect(withQuery.status).toBe(200);
    expect(withQuery.headers['content-type']).toBe(CONTENT_TYPE);

    for (const path of ['/', '/a/x', '/metrics/x', '/readyz']) {
      const reply = await send(`${admin}${path}`);
      expect(reply.status).toBe(404);
      expect(reply.headers['content-type']).toBe('application/json');
      expect(reply.text).toBe(
        '{"error":{"code":"not_found","message":"No such admin path: see docs/admin.md."}}',
      );
    }
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const reply = await send(`${admin}/metrics`, { method, body: method === 'DELETE' ? undefined : '{}' });
      expect(reply.status).toBe(405);
      expect(reply.headers['content-type']).toBe('application/json');
      expect(reply.text).toBe('{"error":{"code":"method_not_allowed","message":"Use GET."}}');
    }
  });

  test('/metrics on the public port is routed like any other path', async ({ get }) => {
    const reply = await get('/metrics');
    expect(reply.status).toBe(404);
    expect(reply.text).toBe(ROUTE_NOT_FOUND);
  });

  test('once Redis is gone, requests count as store_error and the store errors are counted', async ({
    redis,
    get,
    metrics,
  }) => {
    await redis.kill();
    const before = sampleValue(await metrics(), 'tollgate_store_duration_seconds_count')!;
    // A fresh client: no over-limit cache entry answers for it. onStoreError defaults to open.
    for (let i = 0; i < 2; i++) {
      const reply = await get('/a/down', { 'x-forwarded-for': '198.51.100.50' });
      expect(reply.status).toBe(200);
      expect(limitHeaders(reply)).toEqual({});
    }
    const m = await metrics();
    expect(sampleValue(m, 'tollgate_requests_total{limiter="a",decision="store_error"}')).toBe(2);
    expect(sampleValue(m, 'tollgate_store_errors_total')).toBe(2);
    // Failed round trips are timed too.
    expect(sampleValue(m, 'tollgate_store_duration_seconds_count')).toBe(before + 2);
    expect(
      sampleValue(m, 'tollgate_upstream_responses_total{route="limited",upstream="app",result="2xx"}'),
    ).toBe(3 + 1 + 2);
  });
});

describe('a gateway whose only route is /x', () => {
  test('does not serve /metrics on its public port; the admin port does', async ({ only, upstream }) => {
    const seen = upstream.seen.length;
    const pub = await send(`${only.url()}/metrics`);
    expect(pub.status).toBe(404);
    expect(pub.headers['content-type']).toBe('application/json');
    expect(pub.text).toBe(ROUTE_NOT_FOUND);
    expect(upstream.seen.length).toBe(seen);

    const x = await send(`${only.url()}/x`);
    expect(x.status).toBe(200);
    expect(x.json()).toMatchObject({ url: '/x' });

    const m = await scrape(only.adminUrl!);
    expect(samples(m, 'tollgate_upstream_responses_total')).toEqual([
      'tollgate_upstream_responses_total{route="x",upstream="app",result="2xx"} 1',
    ]);
    expect(samples(m, 'tollgate_requests_total')).toEqual([]);
  });

  test('a config without admin has no admin listener', async ({ upstream, gateways }) => {
    const noAdmin = await gateways.start(
      gatewayYaml(`
upstreams:
  app: { url: '${upstream.url}' }
routes:
  - { name: x, paths: [/x], upstream: app }
`),
    );
    expect(noAdmin.adminUrl).toBeUndefined();
    expect((await send(`${noAdmin.url()}/metrics`)).text).toBe(ROUTE_NOT_FOUND);
  });
});
