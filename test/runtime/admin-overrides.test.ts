// The overrides admin API: bearer admin.token for changes (401 without it, 403 when no token is
// configured), bodies checked (400 in the error shape), and an override PUT on one gateway applied
// by another on the same Redis (it polls the version key); DELETE lifts it everywhere.
import { expect } from 'vitest';
import { test } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';

const config = (token: string) =>
  gatewayYaml(`
admin: { host: 127.0.0.1, port: 0${token ? `, token: '${token}'` : ''} }
store:
  redis: { url: '\${REDIS_URL}', keyPrefix: 'admin-ov:' }
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

const ADMIN = 'admin-token-1';
const auth = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };

const limitOf = async (url: string, ip: string) =>
  (await send(`${url}/x`, { headers: { 'x-forwarded-for': ip } })).headers['x-ratelimit-limit'];

test('PUT on one gateway, applied by another on the same Redis; DELETE lifts it', async ({
  gateways,
  gatewayEnv,
}) => {
  const a = await gateways.start(config(ADMIN), gatewayEnv);
  const b = await gateways.start(config(ADMIN), gatewayEnv);
  expect(await limitOf(b.url(), '192.0.2.10')).toBe('2');

  const put = await send(`${a.adminUrl}/v1/overrides/ip:192.0.2.0%2F24`, {
    method: 'PUT',
    headers: auth,
    body: JSON.stringify({ tier: 'pro' }),
  });
  expect([put.status, put.json()]).toEqual([200, { key: 'ip:192.0.2.0/24', source: 'api', tier: 'pro' }]);
  expect(await limitOf(a.url(), '192.0.2.11')).toBe('50'); // the instance that took it: at once
  await waitFor(
    () => limitOf(b.url(), '192.0.2.10'),
    (l) => l === '50',
    { what: 'gateway b to apply the PUT' },
  );

  const custom = await send(`${a.adminUrl}/v1/overrides/ip:192.0.2.99`, {
    method: 'PUT',
    headers: auth,
    body: '{"limit":7}',
  });
  expect(custom.status).toBe(200);
  const list = await send(`${b.adminUrl}/v1/overrides`);
  await waitFor(
    () => limitOf(b.url(), '192.0.2.99'),
    (l) => l === '7',
    { what: 'the custom limit' },
  );
  expect(list.status).toBe(200);
  expect((await send(`${b.adminUrl}/v1/overrides`)).json()).toEqual({
    overrides: [
      { key: 'ip:192.0.2.0/24', source: 'api', tier: 'pro' },
      { key: 'ip:192.0.2.99/32', source: 'api', limit: 7 },
    ],
  });

  const del = await send(`${b.adminUrl}/v1/overrides/ip:192.0.2.0%2F24`, { method: 'DELETE', headers: auth });
  expect([del.status, del.text]).toEqual([204, '']);
  await waitFor(
    () => limitOf(a.url(), '192.0.2.10'),
    (l) => l === '2',
    { what: 'gateway a to apply the DELETE' },
  );
  const again = await send(`${b.adminUrl}/v1/overrides/ip:192.0.2.0%2F24`, {
    method: 'DELETE',
    headers: auth,
  });
  expect([again.status, again.json()]).toEqual([
    404,
    { error: { code: 'not_found', message: 'No override "ip:192.0.2.0/24" was set here.' } },
  ]);
});

test('an unknown tier is taken, and falls back to the default limit, never unlimited', async ({
  gateways,
  gatewayEnv,
}) => {
  const a = await gateways.start(config(ADMIN), gatewayEnv);
  const put = await send(`${a.adminUrl}/v1/overrides/ip:192.0.2.200`, {
    method: 'PUT',
    headers: auth,
    body: '"gold"',
  });
  expect([put.status, put.json()]).toEqual([200, { key: 'ip:192.0.2.200/32', source: 'api', tier: 'gold' }]);
  const r = await send(`${a.url()}/x`, { headers: { 'x-forwarded-for': '192.0.2.200' } });
  expect([r.status, r.headers['x-ratelimit-limit'], r.headers['x-ratelimit-remaining']]).toEqual([
    200,
    '2',
    '1',
  ]);
});

test('401 without the token, 403 without one configured, 400 for a bad body or key', async ({
  gateways,
  gatewayEnv,
}) => {
  const a = await gateways.start(config(ADMIN), gatewayEnv);
  const off = await gateways.start(config(''), gatewayEnv);
  const path = '/v1/overrides/token:abc';
  const body = '{"tier":"pro"}';

  const none = await send(`${a.adminUrl}${path}`, { method: 'PUT', body });
  expect([none.status, none.headers['www-authenticate'], none.json()]).toEqual([
    401,
    'Bearer realm="tollgate-admin"',
    { error: { code: 'unauthorized', message: 'Send "Authorization: Bearer <admin token>".' } },
  ]);
  const wrong = await send(`${a.adminUrl}${path}`, {
    method: 'DELETE',
    headers: { authorization: 'Bearer nope' },
  });
  expect(wrong.status).toBe(401);
  const disabled = await send(`${off.adminUrl}${path}`, { method: 'PUT', headers: auth, body });
  expect([disabled.status, disabled.json()]).toEqual([
    403,
    { error: { code: 'admin_disabled', message: 'Set admin.token (ADMIN_TOKEN) to change anything here.' } },
  ]);

  const notJson = await send(`${a.adminUrl}${path}`, { method: 'PUT', headers: auth, body: '{tier:' });
  expect([notJson.status, notJson.json()]).toEqual([
    400,
    { error: { code: 'invalid_json', message: 'The body is not JSON.' } },
  ]);
  const badValue = await send(`${a.adminUrl}${path}`, { method: 'PUT', headers: auth, body: '{"limit":-1}' });
  expect([badValue.status, badValue.json()]).toEqual([
    400,
    {
      error: {
        code: 'invalid_override',
        message:
          'one of { "tier": name }, { "unlimited": true } or { "limit": n, "burst"?: n } (positive integers)',
      },
    },
  ]);
  const badKey = await send(`${a.adminUrl}/v1/overrides/ip:999.1.1.1`, {
    method: 'PUT',
    headers: auth,
    body,
  });
  expect([badKey.status, badKey.json()]).toEqual([
    400,
    {
      error: { code: 'invalid_override', message: '"ip:999.1.1.1": not an IP address or CIDR: "999.1.1.1"' },
    },
  ]);
  // Nothing of the refused requests was stored.
  const { overrides } = (await send(`${a.adminUrl}/v1/overrides`)).json() as { overrides: { key: string }[] };
  expect(overrides.filter((o) => o.key === 'token:abc')).toEqual([]);
});

test('with the memory store: applied in the process at once', async ({ gateways, upstream }) => {
  const memory = config(ADMIN).replace(/store:\n {2}redis: [^\n]*\n/, '');
  const g = await gateways.start(memory, { UPSTREAM_URL: upstream.url });
  const put = await send(`${g.adminUrl}/v1/overrides/ip:192.0.2.77`, {
    method: 'PUT',
    headers: auth,
    body: '{"limit":9}',
  });
  expect(put.status).toBe(200);
  expect(await limitOf(g.url(), '192.0.2.77')).toBe('9');
  expect((await send(`${g.adminUrl}/v1/overrides`)).json()).toEqual({
    overrides: [{ key: 'ip:192.0.2.77/32', source: 'api', limit: 9 }],
  });
});
