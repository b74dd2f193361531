// The operator's admin routes after known traffic: GET /v1/limiters and /v1/operator with exact
// usage buckets, heaviest keys (hashed, with their parts under log.keyParts), decisions, the
// recent refusal, the store's health, and the last reload's diff; the page and its assets.
import { expect } from 'vitest';
import { hashPart } from '../../src/identity/hash.js';
import { partitionKey } from '../../src/limits/rate-limit-headers.js';
import { limiterText } from '../../src/rules/diff.js';
import { loadConfigText } from '../../src/rules/load.js';
import type { OperatorView } from '../../src/runtime/admin-operator.js';
import { test } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';

const config = (limit: number, keyParts: boolean) =>
  gatewayYaml(`
admin: { host: 127.0.0.1, port: 0 }
store:
  redis: { url: '\${REDIS_URL}', keyPrefix: 'operator-${keyParts ? 'k' : 'n'}:' }
identity:
  trustedProxies: [127.0.0.1]
log: { keyParts: ${keyParts} }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  api:
    windows: [{ limit: ${limit}, period: 1d, key: [ip] }]
routes:
  - { name: r, paths: ['/*'], upstream: app, limiters: [api] }
`);

const A = '203.0.113.1';
const B = '203.0.113.2';

/** The pk of the api limiter's key for a client address, as the RateLimit header would show it. */
const pkOf = (prefix: string, stem: string, ip: string) =>
  partitionKey(`${prefix}{${hashPart(`ip=${ip}`)}}${stem}`);

test('after known traffic: exact usage, top keys with parts, decisions, the refusal; the reload diff', async ({
  gateways,
  gatewayEnv,
}) => {
  const gateway = await gateways.start(config(5, true), gatewayEnv);
  const hit = (ip: string) => send(`${gateway.url()}/x`, { headers: { 'x-forwarded-for': ip } });
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) statuses.push((await hit(A)).status);
  for (let i = 0; i < 3; i++) statuses.push((await hit(B)).status);
  expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 200, 200, 200]);

  const stem = gateway.table.limiters.get('api')!.windows[0]!.keyStem;
  const pkA = pkOf('operator-k:', stem, A);
  const pkB = pkOf('operator-k:', stem, B);
  const limiters = await send(`${gateway.adminUrl}/v1/limiters`);
  expect(limiters.status).toBe(200);
  expect(limiters.json()).toEqual({
    limiters: [
      {
        name: 'api',
        shadow: false,
        decisions: { allowed: 8, limited: 1 },
        windows: [
          {
            window: '1d',
            limit: 5,
            algorithm: 'fixed',
            // A: 1..5 of 5 then refused; B: 1..3 of 5.
            usage: { '0-50': 4, '50-80': 3, '80-100': 1, refused: 1 },
            nearLimit: 1,
          },
        ],
        top: [
          { key: pkA, count: 6, error: 0, parts: { ip: hashPart(`ip=${A}`) } },
          { key: pkB, count: 3, error: 0, parts: { ip: hashPart(`ip=${B}`) } },
        ],
      },
    ],
  });

  const view = (await send(`${gateway.adminUrl}/v1/operator`)).json() as OperatorView;
  expect(view.refusals).toEqual([
    { at: expect.any(String), route: 'r', limiter: 'api', decision: 'limited', key: pkA },
  ]);
  // Round trips: the 429 may come from the over-limit cache, without one.
  const { latency } = view.store;
  expect(view.store).toMatchObject({ ready: true, errors: 0 });
  expect(latency.count).toBeGreaterThan(0);
  expect(latency.buckets.at(-1)).toEqual({ le: '+Inf', count: latency.count });
  expect(view.config.lastReload).toBeNull();
  const before = view.config.version as string;
  expect(before).toMatch(/^[0-9a-f]{12}$/);

  const old = gateway.table.limiters.get('api')!;
  const next = loadConfigText(config(10, true), 'reloaded.yaml', gatewayEnv);
  await gateway.reload(next);
  const after = (await send(`${gateway.adminUrl}/v1/operator`)).json() as OperatorView;
  expect(after.config.version).not.toBe(before);
  expect(after.config.lastReload).toEqual({
    at: expect.any(String),
    changes: {
      limiters: {
        added: [],
        removed: [],
        changed: [{ name: 'api', from: limiterText(old), to: limiterText(next.limiters.get('api')!) }],
      },
      routes: { added: [], removed: [], changed: [] },
    },
  });
  // Counted so far survives the reload; the window's limit is the new one.
  expect(after.limiters[0]!.windows[0]).toMatchObject({ limit: 10, nearLimit: 1 });
});

test('without log.keyParts the top keys carry no parts, and say why', async ({ gateways, gatewayEnv }) => {
  const gateway = await gateways.start(config(5, false), gatewayEnv);
  await send(`${gateway.url()}/x`, { headers: { 'x-forwarded-for': A } });
  const [api] = ((await send(`${gateway.adminUrl}/v1/limiters`)).json() as Pick<OperatorView, 'limiters'>)
    .limiters;
  const stem = gateway.table.limiters.get('api')!.windows[0]!.keyStem;
  expect(api!.top).toEqual([{ key: pkOf('operator-n:', stem, A), count: 1, error: 0 }]);
  expect(api!.keyParts).toBe('hidden: log.keyParts is off');
});

test('the page: HTML with a strict CSP, its assets, 404 for others, 405 for writes', async ({
  gateways,
  gatewayEnv,
}) => {
  const gateway = await gateways.start(config(5, false), gatewayEnv);
  const page = await send(`${gateway.adminUrl}/ui`);
  expect(page.status).toBe(200);
  expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(page.headers['content-security-policy']).toContain("default-src 'none'; script-src 'self'");
  expect(page.text).toContain('<h1>tollgate operator</h1>');
  expect(page.text).not.toMatch(/<script>|style=/);
  expect((await send(`${gateway.adminUrl}/ui/`)).status).toBe(404);
  const uplot = await send(`${gateway.adminUrl}/ui/uplot.min.js`);
  expect([uplot.status, uplot.headers['content-type']]).toEqual([200, 'text/javascript; charset=utf-8']);
  expect(uplot.text).toContain('uPlot');
  const missing = await send(`${gateway.adminUrl}/ui/nope.js`);
  expect([missing.status, missing.json()]).toEqual([
    404,
    { error: { code: 'not_found', message: 'No such admin path: see docs/admin.md.' } },
  ]);
  const post = await send(`${gateway.adminUrl}/ui`, { method: 'POST' });
  expect([post.status, post.headers['allow']]).toEqual([405, 'GET']);
});
