// The admin API's overrides on a real Redis Cluster: both keys in one slot (one hash tag), a PUT
// on one gateway applied by another counting in the same cluster, and a DELETE lifting it.
import calculateSlot from 'cluster-key-slot';
import { expect } from 'vitest';
import { overridesKeys } from '../../src/store/shared-overrides.js';
import { test as base } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';
import { RedisCluster } from '../helpers/redis-cluster.js';
import { waitFor } from '../helpers/wait.js';

const test = base.extend('cluster', { scope: 'file' }, async ({}, { onCleanup }) => {
  const cluster = await RedisCluster.start();
  onCleanup(() => cluster.stop());
  return cluster;
});

const config = gatewayYaml(`
admin: { host: 127.0.0.1, port: 0, token: t0ken }
store:
  redis: { cluster: '\${REDIS_CLUSTER_NODES}', connectTimeout: 5s, keyPrefix: 'ovc:' }
identity:
  trustedProxies: [127.0.0.1]
tiers:
  overrides: { pollInterval: 200ms }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  api:
    windows: [{ limit: 2, period: 1h, key: [ip], tiers: { pro: { limit: 50 } } }]
routes:
  - { name: r, paths: ['/*'], upstream: app, limiters: [api] }
`);

test('the keys share a slot', () => {
  const keys = overridesKeys('ovc:');
  expect(calculateSlot(keys.entries)).toBe(calculateSlot(keys.version));
});

test('PUT on one gateway is applied by another on the same cluster; DELETE lifts it', async ({
  cluster,
  upstream,
  gateways,
}) => {
  const env = { REDIS_CLUSTER_NODES: cluster.seeds.join(','), UPSTREAM_URL: upstream.url };
  const a = await gateways.start(config, env);
  const b = await gateways.start(config, env);
  const limitOf = async (url: string) =>
    (await send(`${url}/x`, { headers: { 'x-forwarded-for': '192.0.2.50' } })).headers['x-ratelimit-limit'];
  const admin = { authorization: 'Bearer t0ken' };

  const put = await send(`${a.adminUrl}/v1/overrides/ip:192.0.2.50`, {
    method: 'PUT',
    headers: admin,
    body: '"pro"',
  });
  expect(put.status).toBe(200);
  await waitFor(
    () => limitOf(b.url()),
    (l) => l === '50',
    { what: 'gateway b to apply the PUT' },
  );
  const del = await send(`${b.adminUrl}/v1/overrides/ip:192.0.2.50`, { method: 'DELETE', headers: admin });
  expect(del.status).toBe(204);
  await waitFor(
    () => limitOf(a.url()),
    (l) => l === '2',
    { what: 'gateway a to apply the DELETE' },
  );
});
