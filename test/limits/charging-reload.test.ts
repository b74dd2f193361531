// cost, chargeAfter, countOnly and align: calendar are hot-reloadable: each reload applies at once,
// on the running counters where the key is the same (cost, charging), on fresh keys for a calendar window.
import { expect } from 'vitest';
import { loadConfigText } from '../../src/rules/load.js';
import { gatewayTest } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';

const config = (pricing: string, window = 'period: 1h') =>
  gatewayYaml(`
store:
  redis: { url: '\${REDIS_URL}', keyPrefix: 'creload:', commandTimeout: 2s }
identity:
  trustedProxies: [127.0.0.1]
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  l: { ${pricing} windows: [{ limit: 10, ${window}, key: [ip] }] }
routes:
  - { name: r, paths: ['/*'], upstream: app, limiters: [l] }
`);

const test = gatewayTest({ config: config('') });

test('plain → cost 3 → chargeAfter → countOnly → calendar', async ({ gateway, gatewayEnv }) => {
  const get = async (path = '/x') => {
    const r = await send(`${gateway.url()}${path}`, { headers: { 'x-forwarded-for': '203.0.113.77' } });
    return [r.status, r.headers['x-ratelimit-remaining'], r.headers['x-cost']];
  };
  const reload = (pricing: string, window?: string) =>
    gateway.reload(loadConfigText(config(pricing, window), 'c.yaml', gatewayEnv));
  expect(await get()).toEqual([200, '9', undefined]);
  reload('cost: 3,');
  expect(await get()).toEqual([200, '6', undefined]);
  reload('chargeAfter: { header: X-Cost },');
  expect(await get('/cost?n=2')).toEqual([200, '6', undefined]); // checked, then charged 2
  expect(await get('/cost?n=0')).toEqual([200, '4', undefined]);
  reload('');
  expect(await get('/cost?n=5')).toEqual([200, '3', '5']); // no chargeAfter: the header passes
  reload('countOnly: [404],');
  expect(await get('/status/404')).toEqual([404, '3', undefined]);
  expect(await get('/status/200')).toEqual([200, '2', undefined]);
  reload('', 'period: 1h, align: first-hit');
  expect(await get()).toEqual([200, '1', undefined]); // first-hit is the default: the same key
  reload('', 'period: 1d, align: calendar');
  expect(await get()).toEqual([200, '9', undefined]); // a calendar day: a fresh key
});
