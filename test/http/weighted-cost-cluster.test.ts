// Weighted cost and calendar windows on a real Redis Cluster, through two gateways sharing it:
// a post-charge from one gateway is seen by the other, countOnly counts only 401s, a calendar
// window counts across both. Keys spread over the cluster's slots (one tag per address).
import { expect } from 'vitest';
import { clusterPairTest } from '../helpers/fixtures.js';
import { gatewayYaml, send, type Reply } from '../helpers/gateway.js';

const CONFIG = gatewayYaml(`
store:
  redis: { cluster: '\${REDIS_CLUSTER_NODES}', commandTimeout: 5s, connectTimeout: 5s }
identity:
  trustedProxies: [127.0.0.1]
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  tokens: { chargeAfter: { header: X-Cost }, windows: [{ limit: 10, period: 1h, key: [ip] }] }
  logins: { countOnly: [401], windows: [{ limit: 1, period: 1h, key: [ip] }] }
  daily: { cost: 2, windows: [{ limit: 5, period: 1d, align: calendar, timeZone: Europe/Berlin, key: [ip] }] }
routes:
  - { name: tokens, paths: ['/cost'], upstream: app, limiters: [tokens] }
  - { name: logins, paths: ['/status/*'], upstream: app, limiters: [logins] }
  - { name: daily, paths: ['/daily/*'], upstream: app, limiters: [daily] }
`);

const test = clusterPairTest(CONFIG);

const counts = (r: Reply) => [r.status, r.headers['x-ratelimit-remaining']];
const IPS = ['192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.4'];

// A post-charge is not awaited: it reaches Redis before the client has its answer, on the charging
// gateway's connection. So a check that must see it goes through that gateway, or follows one that did.
test('chargeAfter across two gateways: one charges, the other sees it', async ({ pair: [a, b] }) => {
  for (const ip of IPS) {
    const from = { headers: { 'x-forwarded-for': ip } };
    expect(counts(await send(`${a.url()}/cost?n=7`, from))).toEqual([200, '10']);
    expect(counts(await send(`${a.url()}/cost?n=0`, from))).toEqual([200, '3']);
    expect(counts(await send(`${b.url()}/cost?n=3`, from))).toEqual([200, '3']);
    expect(counts(await send(`${b.url()}/cost?n=1`, from))).toEqual([429, '0']);
    expect(counts(await send(`${a.url()}/cost?n=1`, from))).toEqual([429, '0']);
  }
});

test('countOnly: a 401 on one gateway spends the budget on both', async ({ pair: [a, b] }) => {
  for (const ip of IPS) {
    const from = { headers: { 'x-forwarded-for': ip } };
    expect(counts(await send(`${a.url()}/status/200`, from))).toEqual([200, '1']);
    expect(counts(await send(`${b.url()}/status/401`, from))).toEqual([401, '1']);
    expect(counts(await send(`${b.url()}/status/200`, from))).toEqual([429, '0']);
    expect(counts(await send(`${a.url()}/status/200`, from))).toEqual([429, '0']);
  }
});

test('a calendar day in Berlin with cost 2, counted across both gateways', async ({ pair: [a, b] }) => {
  for (const ip of IPS) {
    const from = { headers: { 'x-forwarded-for': ip } };
    expect(counts(await send(`${a.url()}/daily/x`, from))).toEqual([200, '3']);
    expect(counts(await send(`${b.url()}/daily/x`, from))).toEqual([200, '1']);
    expect(counts(await send(`${a.url()}/daily/x`, from))).toEqual([429, '0']);
  }
});
