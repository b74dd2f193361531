// A reload that changes a window's algorithm starts it on fresh keys: the new algorithm's full
// budget, never the old one's state read as its own; and changing it back finds the old counter.
import { expect } from 'vitest';
import { loadConfigText } from '../../src/rules/load.js';
import { gatewayTest } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';

const config = (algorithm: string) =>
  gatewayYaml(`
store:
  redis: { url: '\${REDIS_URL}', keyPrefix: 'reload:', commandTimeout: 2s }
identity:
  trustedProxies: [127.0.0.1]
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  l: { windows: [{ limit: 3, period: 1h, algorithm: ${algorithm}, key: [ip] }] }
routes:
  - { name: r, paths: ['/*'], upstream: app, limiters: [l] }
`);

const test = gatewayTest({ config: config('fixed') });

test('fixed → sliding → token-bucket → fixed', async ({ gateway, gatewayEnv, redisClient }) => {
  const get = async () => {
    const r = await send(`${gateway.url()}/x`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    return [r.status, r.headers['x-ratelimit-remaining']];
  };
  const reload = (algorithm: string) =>
    gateway.reload(loadConfigText(config(algorithm), 'c.yaml', gatewayEnv));
  expect([await get(), await get()]).toEqual([
    [200, '2'],
    [200, '1'],
  ]);
  reload('sliding');
  expect([await get(), await get(), await get(), await get()]).toEqual([
    [200, '2'],
    [200, '1'],
    [200, '0'],
    [429, '0'],
  ]);
  reload('token-bucket');
  expect(await get()).toEqual([200, '2']);
  reload('fixed');
  expect(await get()).toEqual([200, '0']); // the fixed counter kept its two hits
  expect((await redisClient.keys('reload:*:l:*')).map((k) => k.split(':').slice(3, 4)[0]).sort()).toEqual([
    '3600000',
    '3600000.sliding',
    '3600000.token-bucket',
  ]);
});
