// Envoy's rate-limit service chooses the tier as HTTP requests do: an override keyed by a descriptor
// entry's value (rateLimitService.overrideKeys: remote_address → ip, api_key → token, …), from the
// overrides file and from the admin API (the store), to a tier, unlimited or a custom limit; an
// unknown tier gets the default. Real gateway, real redis-server, real gRPC calls, exact answers.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { test as base } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';
import { sampleValue, scrape } from '../helpers/prometheus.js';
import { rlsClient, UNMATCHED, type RlsClient, type RlsRequest } from '../helpers/rls-client.js';

const ADMIN = 'rls-tiers-admin';

const OVERRIDES = `
ip:198.51.100.0/24: pro
ip:198.51.100.7: unlimited
ip:203.0.113.5: { limit: 4 }
ip:192.0.2.9: gold
ip:2001:db8::/48: pro
token:key-pro: pro
token:key-big: { limit: 7 }
workspace:ws-free: unlimited
`;

const config = (file: string) =>
  gatewayYaml(`
rateLimitService:
  host: 127.0.0.1
  port: 0
  overrideKeys: { remote_address: ip, api_key: token, workspace: workspace }
admin: { host: 127.0.0.1, port: 0, token: '${ADMIN}' }
store: { redis: { url: '\${REDIS_URL}', commandTimeout: 2s, keyPrefix: 'rls-tiers:' } }
tiers:
  overrides: { file: '${file}', pollInterval: 200ms }
upstreams: { app: { url: '\${UPSTREAM_URL}' } }
limiters:
  per-ip:
    descriptors: [{ domain: edge, entries: [{ key: remote_address }] }]
    windows: [{ limit: 2, period: 1h, tiers: { pro: { limit: 5 }, free: { limit: 1 } } }]
  per-key:
    descriptors: [{ domain: edge, entries: [{ key: api_key }] }]
    windows: [{ limit: 3, period: 1h, tiers: { pro: { limit: 10 } } }]
routes:
  - { name: all, paths: ['/*'], upstream: app }
`);

const test = base
  .extend('overridesFile', { scope: 'file' }, async ({}, { onCleanup }) => {
    const dir = await mkdtemp(join(tmpdir(), 'tollgate-rls-tiers-'));
    onCleanup(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'overrides.yaml');
    await writeFile(file, OVERRIDES);
    return file;
  })
  .extend('gateway', { scope: 'file' }, async ({ gatewayEnv, gateways, overridesFile }) =>
    gateways.start(config(overridesFile), gatewayEnv),
  )
  .extend('rls', { scope: 'file' }, rlsClient);

const entries = (...pairs: [string, string][]) => ({
  entries: pairs.map(([key, value]) => ({ key, value })),
});
const from = (addr: string): RlsRequest => ({
  domain: 'edge',
  descriptors: [entries(['remote_address', addr])],
});

/** Each descriptor's limit and what is left, and the overall code, of one call. */
async function limits(rls: RlsClient, request: RlsRequest) {
  const r = await rls.shouldRateLimit(request);
  return {
    code: r.overallCode,
    statuses: r.statuses.map((s) =>
      s.currentLimit
        ? [s.code, s.currentLimit.name, s.currentLimit.requestsPerUnit, s.limitRemaining]
        : s.code,
    ),
    limitHeader: r.responseHeadersToAdd.find((h) => h.key === 'x-ratelimit-limit')?.value,
  };
}

test('the default tier without an override: 2 an hour, then OVER_LIMIT', async ({ rls }) => {
  expect(await limits(rls, from('203.0.113.1'))).toEqual({
    code: 'OK',
    statuses: [['OK', 'per-ip.0', 2, 1]],
    limitHeader: '2',
  });
  await limits(rls, from('203.0.113.1'));
  expect(await limits(rls, from('203.0.113.1'))).toEqual({
    code: 'OVER_LIMIT',
    statuses: [['OVER_LIMIT', 'per-ip.0', 2, 0]],
    limitHeader: '2',
  });
});

test('an address override from the file: the CIDR tier, the longest range, a custom limit, an unknown tier, IPv6', async ({
  rls,
}) => {
  // 198.51.100.0/24 → pro (5).
  expect((await limits(rls, from('198.51.100.3'))).statuses).toEqual([['OK', 'per-ip.0', 5, 4]]);
  // 198.51.100.7 (/32, longer than the /24) → unlimited: nothing counted, no limit, no headers.
  for (let i = 0; i < 4; i++) {
    const r = await rls.shouldRateLimit(from('198.51.100.7'));
    expect(r).toEqual({
      overallCode: 'OK',
      statuses: [UNMATCHED],
      responseHeadersToAdd: [],
      requestHeadersToAdd: [],
    });
  }
  // { limit: 4 }.
  const custom = [];
  for (let i = 0; i < 5; i++) custom.push((await limits(rls, from('203.0.113.5'))).statuses[0]);
  expect(custom).toEqual([
    ['OK', 'per-ip.0', 4, 3],
    ['OK', 'per-ip.0', 4, 2],
    ['OK', 'per-ip.0', 4, 1],
    ['OK', 'per-ip.0', 4, 0],
    ['OVER_LIMIT', 'per-ip.0', 4, 0],
  ]);
  // gold names no window's tier: the default (2), never unlimited.
  expect((await limits(rls, from('192.0.2.9'))).statuses).toEqual([['OK', 'per-ip.0', 2, 1]]);
  await limits(rls, from('192.0.2.9'));
  expect((await limits(rls, from('192.0.2.9'))).code).toBe('OVER_LIMIT');
  // An IPv6 address in 2001:db8::/48 → pro.
  expect((await limits(rls, from('2001:db8:0:5::1'))).statuses).toEqual([['OK', 'per-ip.0', 5, 4]]);
  expect((await limits(rls, from('2001:db9::1'))).statuses).toEqual([['OK', 'per-ip.0', 2, 1]]);
});

test('token and workspace overrides by the entries overrideKeys names; a token wins over an address', async ({
  rls,
}) => {
  expect(
    (await limits(rls, { domain: 'edge', descriptors: [entries(['api_key', 'key-pro'])] })).statuses,
  ).toEqual([['OK', 'per-key.0', 10, 9]]);
  expect(
    (await limits(rls, { domain: 'edge', descriptors: [entries(['api_key', 'key-big'])] })).statuses,
  ).toEqual([['OK', 'per-key.0', 7, 6]]);
  // One request, two descriptors: the token's override (pro) applies to both, over the address's default.
  expect(
    await limits(rls, {
      domain: 'edge',
      descriptors: [entries(['remote_address', '203.0.113.40']), entries(['api_key', 'key-pro'])],
    }),
  ).toEqual({
    code: 'OK',
    statuses: [
      ['OK', 'per-ip.0', 5, 4],
      ['OK', 'per-key.0', 10, 8],
    ],
    limitHeader: '5',
  });
  // An entry no limiter answers still names the request: workspace ws-free is unlimited.
  for (let i = 0; i < 5; i++) {
    expect(
      await limits(rls, {
        domain: 'edge',
        descriptors: [entries(['api_key', 'key-plain']), entries(['workspace', 'ws-free'])],
      }),
    ).toEqual({ code: 'OK', statuses: ['OK', 'OK'], limitHeader: undefined });
  }
  // The same api_key without the workspace: the default (3).
  expect(
    (await limits(rls, { domain: 'edge', descriptors: [entries(['api_key', 'key-plain'])] })).statuses,
  ).toEqual([['OK', 'per-key.0', 3, 2]]);
  // An entry key overrideKeys does not name is not looked up (token:key-pro is an api_key's, not a client_id's).
  expect(
    (
      await limits(rls, {
        domain: 'edge',
        descriptors: [entries(['client_id', 'key-pro']), entries(['api_key', 'k9'])],
      })
    ).statuses,
  ).toEqual(['OK', ['OK', 'per-key.0', 3, 2]]);
});

test("the admin API's overrides (in the store) apply at once, keep the count, and lift", async ({
  rls,
  gateway,
}) => {
  const addr = '192.0.2.50';
  expect((await limits(rls, from(addr))).statuses).toEqual([['OK', 'per-ip.0', 2, 1]]);
  expect((await limits(rls, from(addr))).statuses).toEqual([['OK', 'per-ip.0', 2, 0]]);
  expect((await limits(rls, from(addr))).code).toBe('OVER_LIMIT');
  const auth = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  const put = await send(`${gateway.adminUrl}/v1/overrides/ip:${addr}`, {
    method: 'PUT',
    headers: auth,
    body: '"pro"',
  });
  expect(put.status).toBe(200);
  // The same counter, checked against 5: 2 spent, so 2 left after this one.
  expect((await limits(rls, from(addr))).statuses).toEqual([['OK', 'per-ip.0', 5, 2]]);
  const free = await send(`${gateway.adminUrl}/v1/overrides/ip:${addr}`, {
    method: 'PUT',
    headers: auth,
    body: '{"tier":"free"}',
  });
  expect(free.status).toBe(200);
  expect(await limits(rls, from(addr))).toEqual({
    code: 'OVER_LIMIT',
    statuses: [['OVER_LIMIT', 'per-ip.0', 1, 0]],
    limitHeader: '1',
  });
  // The admin API's entry wins over the file's for the same key.
  const over = await send(`${gateway.adminUrl}/v1/overrides/ip:198.51.100.0%2F24`, {
    method: 'PUT',
    headers: auth,
    body: '{"limit":9}',
  });
  expect(over.status).toBe(200);
  expect((await limits(rls, from('198.51.100.60'))).statuses).toEqual([['OK', 'per-ip.0', 9, 8]]);
  for (const key of [`ip:${addr}`, 'ip:198.51.100.0%2F24']) {
    const del = await send(`${gateway.adminUrl}/v1/overrides/${key}`, { method: 'DELETE', headers: auth });
    expect(del.status).toBe(204);
  }
  expect((await limits(rls, from(addr))).statuses).toEqual([['OVER_LIMIT', 'per-ip.0', 2, 0]]);
  expect((await limits(rls, from('198.51.100.60'))).statuses).toEqual([['OK', 'per-ip.0', 5, 3]]);
});

test('an unlimited call counts its limiters exempt', async ({ rls, gateway }) => {
  const metric = 'tollgate_requests_total{limiter="per-ip",decision="exempt"}';
  const before = sampleValue(await scrape(gateway.adminUrl!), metric) ?? 0;
  await rls.shouldRateLimit(from('198.51.100.7'));
  await rls.shouldRateLimit(from('198.51.100.7'));
  expect(sampleValue(await scrape(gateway.adminUrl!), metric)).toBe(before + 2);
});
