// Tiers through a real gateway and redis-server: the tier by a bearer JWT's claim and by the
// workspace token's plan, an unknown tier falling back to the window's own limit, and overrides
// from a file that is reloaded when it changes (a bad file keeps the last good overrides).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { expect } from 'vitest';
import { sha256Hex } from '../../src/credentials/digest.js';
import { gatewayTest } from '../helpers/fixtures.js';
import { replaceFile } from '../helpers/files.js';
import { gatewayYaml, send, type Reply } from '../helpers/gateway.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { waitFor } from '../helpers/wait.js';

const SECRET = 'tier-secret-tier-secret-tier-secret!';
const overridesFile = join(mkdtempSync(join(tmpdir(), 'tollgate-tiers-')), 'overrides.yaml');
writeFileSync(overridesFile, "ip:198.51.100.0/24: unlimited\n'ip:198.51.100.9': { limit: 4 }\n");
const logs = capturingLogger();

const token = (id: string, plan?: string) =>
  `{ id: ${id}, sha256: '${sha256Hex('s3cret')}'${plan ? `, plan: ${plan}` : ''} }`;

const test = gatewayTest({
  config: gatewayYaml(`
store:
  redis: { url: '\${REDIS_URL}', keyPrefix: 'tiers:' }
identity:
  trustedProxies: [127.0.0.1]
  workspaceTokens:
    source: static
    static: [${token('t-pro', 'pro')}, ${token('t-gold', 'gold')}, ${token('t-none')}]
tiers:
  jwt: { claim: plan, secret: '${SECRET}', algorithms: [HS256] }
  workspaceTokenPlan: true
  overrides: { file: '\${OVERRIDES_FILE}' }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  api:
    windows: [{ limit: 2, period: 1h, key: [ip], tiers: { free: { limit: 1 }, pro: { limit: 5 } } }]
routes:
  - { name: r, paths: ['/*'], upstream: app, limiters: [api] }
`),
  env: { OVERRIDES_FILE: overridesFile },
  options: { logger: logs.logger },
});

const jwt = (claims: object, secret = SECRET) =>
  new SignJWT({ sub: 'user-1', ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(secret));

/** [status, X-RateLimit-Limit, X-RateLimit-Remaining] of one request from `ip`. */
async function hit(
  url: string,
  ip: string,
  authorization?: string,
): Promise<(string | number | undefined)[]> {
  const r: Reply = await send(`${url}/x`, {
    headers: { 'x-forwarded-for': ip, ...(authorization ? { authorization } : {}) },
  });
  return [r.status, r.headers['x-ratelimit-limit'], r.headers['x-ratelimit-remaining']];
}

test('the tier of a verified JWT claim; a bad signature or an unknown tier: the default limit', async ({
  gateway,
}) => {
  const url = gateway.url();
  expect(await hit(url, '203.0.113.1', `Bearer ${await jwt({ plan: 'pro' })}`)).toEqual([200, '5', '4']);
  expect(await hit(url, '203.0.113.2', `Bearer ${await jwt({ plan: 'free' })}`)).toEqual([200, '1', '0']);
  expect(await hit(url, '203.0.113.2', `Bearer ${await jwt({ plan: 'free' })}`)).toEqual([429, '1', '0']);
  expect(await hit(url, '203.0.113.3', `Bearer ${await jwt({ plan: 'pro' }, 'x'.repeat(40))}`)).toEqual([
    200,
    '2',
    '1',
  ]);
  expect(await hit(url, '203.0.113.4', `Bearer ${await jwt({ plan: 'gold' })}`)).toEqual([200, '2', '1']);
  expect(await hit(url, '203.0.113.5')).toEqual([200, '2', '1']);
});

test("the workspace token's plan; an unknown plan, none, or a bad secret: the default limit", async ({
  gateway,
}) => {
  const url = gateway.url();
  expect(await hit(url, '203.0.113.11', 'Bearer t-pro|s3cret')).toEqual([200, '5', '4']);
  expect(await hit(url, '203.0.113.12', 'Bearer t-gold|s3cret')).toEqual([200, '2', '1']);
  expect(await hit(url, '203.0.113.13', 'Bearer t-none|s3cret')).toEqual([200, '2', '1']);
  expect(await hit(url, '203.0.113.14', 'Bearer t-pro|wrong')).toEqual([200, '2', '1']);
});

test('a changed tier keeps the counter: pro → free is refused at once, free → pro goes on', async ({
  gateway,
}) => {
  const url = gateway.url();
  const pro = `Bearer ${await jwt({ plan: 'pro' })}`;
  const free = `Bearer ${await jwt({ plan: 'free' })}`;
  expect(await hit(url, '203.0.113.21', pro)).toEqual([200, '5', '4']);
  expect(await hit(url, '203.0.113.21', pro)).toEqual([200, '5', '3']);
  expect(await hit(url, '203.0.113.21', free)).toEqual([429, '1', '0']);
  expect(await hit(url, '203.0.113.21', pro)).toEqual([200, '5', '2']);
});

test('the overrides file: applied, reloaded on change, a bad file keeps the last good one', async ({
  gateway,
  upstream,
}) => {
  const url = gateway.url();
  // unlimited: no window counted, no rate-limit headers; the most specific range wins.
  const before = upstream.seen.length;
  for (let i = 0; i < 4; i++) expect(await hit(url, '198.51.100.7')).toEqual([200, undefined, undefined]);
  expect(upstream.seen.length - before).toBe(4);
  expect(await hit(url, '198.51.100.9')).toEqual([200, '4', '3']);

  await replaceFile(
    overridesFile,
    'overrides:\n  ip:198.51.100.0/24: { limit: 9 }\n  ip:203.0.113.31: pro\n',
  );
  await waitFor(
    () => hit(url, '198.51.100.7'),
    (r) => r[1] === '9',
    { what: 'the new overrides file' },
  );
  expect(await hit(url, '203.0.113.31')).toEqual([200, '5', '4']);
  // An override's tier beats the JWT's claim.
  expect(await hit(url, '203.0.113.31', `Bearer ${await jwt({ plan: 'free' })}`)).toEqual([200, '5', '3']);

  await replaceFile(overridesFile, 'ip:198.51.100.0/24: { limit: 0 }\n');
  await waitFor(
    () => logs.lines.find((l) => l.msg === 'overrides file invalid: keeping the last good overrides'),
    (l) => l !== undefined,
    { what: 'the bad file to be refused' },
  );
  expect(
    logs.lines.find((l) => l.msg === 'overrides file invalid: keeping the last good overrides'),
  ).toMatchObject({
    level: 50,
    file: overridesFile,
    errors: [
      '"ip:198.51.100.0/24": one of { "tier": name }, { "unlimited": true } or { "limit": n, "burst"?: n } (positive integers)',
    ],
  });
  expect((await hit(url, '198.51.100.8'))[1]).toBe('9');
});
