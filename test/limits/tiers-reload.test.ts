// Tiers are hot-reloadable: a reload that changes a tier's limit, or names another overrides file,
// applies to the next request, on the same counter (a tier is not part of the store key).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { loadConfigText } from '../../src/rules/load.js';
import { gatewayTest } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-tiers-reload-'));
writeFileSync(join(dir, 'a.yaml'), 'ip:203.0.113.0/24: pro\n');
writeFileSync(join(dir, 'b.yaml'), 'ip:203.0.113.0/24: free\n');

const config = (proLimit: number, file: string) =>
  gatewayYaml(
    `
store:
  redis: { url: '\${REDIS_URL}', keyPrefix: 'tiers-reload:' }
identity:
  trustedProxies: [127.0.0.1]
tiers:
  overrides: { file: '${join(dir, file)}' }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  api:
    windows: [{ limit: 3, period: 1h, key: [ip], tiers: { pro: { limit: ${proLimit} }, free: { limit: 2 } } }]
routes:
  - { name: r, paths: ['/*'], upstream: app, limiters: [api] }
`,
    { listeners: [{ ietfHeaders: true }] },
  );

const test = gatewayTest({ config: config(10, 'a.yaml') });

test("a reload changes a tier's limit and the overrides file; the counter carries on", async ({
  gateway,
  gatewayEnv,
}) => {
  const hit = async () => {
    const r = await send(`${gateway.url()}/x`, { headers: { 'x-forwarded-for': '203.0.113.5' } });
    return [r.status, r.headers['x-ratelimit-limit'], r.headers['x-ratelimit-remaining']];
  };
  expect(await hit()).toEqual([200, '10', '9']);
  // RateLimit-Policy states the limit at the request's tier too.
  const r = await send(`${gateway.url()}/x`, { headers: { 'x-forwarded-for': '203.0.113.6' } });
  expect([r.headers['ratelimit-policy'], r.headers['ratelimit']]).toEqual([
    '"api.0";q=10;w=3600',
    expect.stringMatching(/^"api\.0";r=9;t=3600;pk=:[A-Za-z0-9+/]{16}:$/),
  ]);
  await gateway.reload(loadConfigText(config(20, 'a.yaml'), 'c.yaml', gatewayEnv));
  expect(await hit()).toEqual([200, '20', '18']);
  await gateway.reload(loadConfigText(config(20, 'b.yaml'), 'c.yaml', gatewayEnv));
  // The new file is read by the reload; its tier (free, 2) is already spent by the two hits.
  await waitFor(hit, (r) => r[1] === '2', { what: 'the new overrides file' });
  expect(await hit()).toEqual([429, '2', '0']);
});
