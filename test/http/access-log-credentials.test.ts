// log.keyParts: the access line also carries what the verified credentials said (the tier they
// name, the workspace token's id and workspace, the JWT's subject) and the cost the upstream
// reported (chargeAfter), so `tollgate replay` of the gateway's own log decides tiers, overrides
// and post-charges as the gateway did, without a warning. Never a secret.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { expect } from 'vitest';
import { sha256Hex } from '../../src/credentials/digest.js';
import { hashPart } from '../../src/identity/hash.js';
import { runCli } from '../helpers/cli.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { TEST_JWT_SECRET } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait.js';

const SECRET = 'bearer-secret-bearer-secret-bearer!';
const dir = mkdtempSync(join(tmpdir(), 'tollgate-logfields-'));
writeFileSync(join(dir, 'overrides.yaml'), "'sub:user-vip': unlimited\n'workspace:ws-2': { limit: 2 }\n");

const staticToken = (id: string, plan: string, workspace: string) =>
  `{ id: ${id}, sha256: '${sha256Hex('s3cret')}', plan: ${plan}, workspace: ${workspace} }`;

/** Tiers by a bearer JWT's claim and by the workspace token's plan, overrides by sub and workspace, a chargeAfter route. */
const BEARER = gatewayYaml(`
log: { keyParts: true }
identity:
  trustedProxies: [127.0.0.1]
  workspaceTokens:
    source: static
    static: [${staticToken('t-pro', 'pro', 'ws-1')}, ${staticToken('t-free', 'free', 'ws-2')}]
tiers:
  jwt: { claim: plan, secret: '${SECRET}', algorithms: [HS256] }
  workspaceTokenPlan: true
  overrides: { file: '\${OVERRIDES_FILE}' }
upstreams: { app: { url: '\${UPSTREAM_URL}' } }
limiters:
  api: { windows: [{ limit: 1, period: 1h, key: [ip], tiers: { pro: { limit: 3 } } }] }
  spend: { chargeAfter: { header: X-Cost, max: 50 }, windows: [{ limit: 10, period: 1h, key: [workspace_token] }] }
routes:
  - { name: api, paths: ['/api/*'], upstream: app, limiters: [api] }
  - { name: spend, paths: ['/cost'], upstream: app, limiters: [spend] }
`);

/**
 * Tiers by a claim of the visitor JWT (identity.jwt's keys), the session as the key; and, with no
 * overrides, a route keyed by the workspace token whose allow list names a workspace.
 */
const VISITOR = gatewayYaml(`
log: { keyParts: true }
identity:
  jwt: { secret: '${TEST_JWT_SECRET}', algorithms: [HS256], issuer: tollgate, audience: tollgate-widget }
  workspaceTokens:
    source: static
    static: [${staticToken('t-pro', 'pro', 'ws-1')}, ${staticToken('t-free', 'free', 'ws-2')}]
tiers:
  jwt: { claim: plan }
upstreams: { app: { url: '\${UPSTREAM_URL}' } }
limiters:
  visits: { windows: [{ limit: 1, period: 1h, key: [jwt], tiers: { pro: { limit: 2 } } }] }
  keyed: { windows: [{ limit: 1, period: 1h, key: [workspace_token] }], allow: { workspaces: [ws-2] } }
routes:
  - { name: visits, paths: ['/v/*'], upstream: app, limiters: [visits] }
  - { name: listed, paths: ['/l/*'], upstream: app, limiters: [keyed] }
`);

const bearerLog = capturingLogger();
const visitorLog = capturingLogger();
const test = serversTest
  .extend('bearer', { scope: 'file' }, ({ upstream, gateways }) =>
    gateways.start(
      BEARER,
      { UPSTREAM_URL: upstream.url, OVERRIDES_FILE: join(dir, 'overrides.yaml') },
      { logger: bearerLog.logger },
    ),
  )
  .extend('visitor', { scope: 'file' }, ({ upstream, gateways }) =>
    gateways.start(VISITOR, { UPSTREAM_URL: upstream.url }, { logger: visitorLog.logger }),
  );

const bearerJwt = (claims: Record<string, string>) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(SECRET));

const visitorJwt = (claims: Record<string, string>) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer('tollgate')
    .setAudience('tollgate-widget')
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));

type Line = Record<string, unknown>;

/** Sends each request in turn (its own request id); the statuses, and the access lines once all are written. */
async function sendAll(
  url: string,
  log: { lines: Line[] },
  requests: readonly { path: string; headers: Record<string, string> }[],
): Promise<{ statuses: number[]; lines: Line[] }> {
  const ids: string[] = [];
  const statuses: number[] = [];
  for (const { path, headers } of requests) {
    const id = randomUUID();
    ids.push(id);
    statuses.push((await send(`${url}${path}`, { headers: { ...headers, 'x-request-id': id } })).status);
  }
  const lines = await waitFor(
    () => ids.map((id) => log.lines.find((l) => l['reqId'] === id)),
    (found) => found.every(Boolean),
    { what: `${ids.length} access lines`, timeoutMs: 20_000 },
  );
  return { statuses, lines: lines as Line[] };
}

/** The credential fields of a line (and charged, status, client), to compare exactly. */
const fieldsOf = (l: Line) => ({
  status: l['status'],
  client: l['client'],
  tier: l['tier'],
  token: l['token'],
  workspace: l['workspace'],
  sub: l['sub'],
  charged: l['charged'],
});

interface Report {
  warnings: unknown[];
  missingKeyParts: Record<string, number>;
  routes: { name: string; requests: number; refused: number; tiers: Record<string, number> }[];
  limiters: { name: string; requests: number; refused: number; exempt: number; keys: number }[];
}

/** `tollgate replay --json` of `lines` against `config` (the gateway's own). */
async function replay(config: string, lines: Line[], env: Record<string, string>): Promise<Report> {
  const at = mkdtempSync(join(dir, 'replay-'));
  writeFileSync(join(at, 'gateway.yaml'), config);
  writeFileSync(join(at, 'access.log'), lines.map((l) => JSON.stringify(l)).join('\n'));
  const run = await runCli(['replay', '--json', '--config', 'gateway.yaml', 'access.log'], { cwd: at, env });
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { candidate: Report }).candidate;
}

test('bearer JWT and workspace token: tier, sub, token, workspace and charged logged; replay decides as the gateway did', async ({
  bearer,
  upstream,
}) => {
  const pro = `Bearer ${await bearerJwt({ sub: 'user-1', plan: 'pro' })}`;
  const vip = `Bearer ${await bearerJwt({ sub: 'user-vip', plan: 'free' })}`;
  const from = (ip: string, authorization: string) => ({ 'x-forwarded-for': ip, authorization });
  const api = (ip: string, authorization: string) => ({ path: '/api/x', headers: from(ip, authorization) });
  const cost = (n: number) => ({ path: `/cost?n=${n}`, headers: from('203.0.113.9', 'Bearer t-pro|s3cret') });
  const { statuses, lines } = await sendAll(bearer.url(), bearerLog, [
    // The JWT's tier: pro, 3 an hour.
    ...Array.from({ length: 4 }, () => api('203.0.113.1', pro)),
    // sub:user-vip is unlimited (its claim names a tier no window has).
    ...Array.from({ length: 3 }, () => api('203.0.113.2', vip)),
    // The token's plan: pro.
    ...Array.from({ length: 4 }, () => api('203.0.113.3', 'Bearer t-pro|s3cret')),
    // workspace:ws-2 at a limit of 2.
    ...Array.from({ length: 3 }, () => api('203.0.113.4', 'Bearer t-free|s3cret')),
    // 10 an hour by token, charged what the upstream reports: room for 1 before each, 4 after it.
    cost(4),
    cost(4),
    cost(4),
    cost(4),
  ]);
  expect(statuses).toEqual([
    200, 200, 200, 429, 200, 200, 200, 200, 200, 200, 429, 200, 200, 429, 200, 200, 200, 429,
  ]);

  // null: checked, and none verified (a JWT is no workspace token, a token no JWT).
  const noToken = { token: null, workspace: null };
  const jwtLine = { client: '203.0.113.1', tier: 'pro', sub: 'user-1', ...noToken };
  const vipLine = { client: '203.0.113.2', tier: 'free', sub: 'user-vip', ...noToken };
  const proToken = { tier: 'pro', token: 't-pro', workspace: 'ws-1', sub: null };
  const ws2 = { client: '203.0.113.4', tier: 'free', token: 't-free', workspace: 'ws-2', sub: null };
  const spent = { client: '203.0.113.9', ...proToken };
  const expected = (status: number, f: object) => ({
    status,
    client: undefined,
    tier: undefined,
    token: undefined,
    workspace: undefined,
    sub: undefined,
    charged: undefined,
    ...f,
  });
  expect(lines.map(fieldsOf)).toEqual([
    ...[200, 200, 200, 429].map((s) => expected(s, jwtLine)),
    ...[200, 200, 200].map((s) => expected(s, vipLine)),
    ...[200, 200, 200, 429].map((s) => expected(s, { client: '203.0.113.3', ...proToken })),
    ...[200, 200, 429].map((s) => expected(s, ws2)),
    ...[200, 200, 200].map((s) => expected(s, { ...spent, charged: 4 })),
    expected(429, spent), // refused before forwarding: the upstream reported nothing
  ]);
  // The token's key part is its id, hashed; no secret or JWT reaches the log.
  expect(lines.at(-1)!['keys']).toMatchObject({ workspace_token: hashPart('wt=t-pro') });
  const text = JSON.stringify(lines);
  expect(text).not.toContain('s3cret');
  expect(text).not.toContain(pro.slice(7));

  const report = await replay(BEARER, lines, {
    UPSTREAM_URL: upstream.url,
    OVERRIDES_FILE: join(dir, 'overrides.yaml'),
  });
  expect(report.warnings).toEqual([]);
  expect(report.missingKeyParts).toEqual({});
  expect(
    report.routes.map(({ name, requests, refused, tiers }) => ({ name, requests, refused, tiers })),
  ).toEqual([
    {
      name: 'api',
      requests: 14,
      refused: 3,
      tiers: { 'pro (jwt)': 8, 'unlimited (override)': 3, 'limit 2 (override)': 3 },
    },
    { name: 'spend', requests: 4, refused: 1, tiers: { default: 4 } },
  ]);
  expect(
    report.limiters.map(({ name, requests, refused, exempt, keys }) => ({
      name,
      requests,
      refused,
      exempt,
      keys,
    })),
  ).toEqual([
    { name: 'api', requests: 11, refused: 3, exempt: 3, keys: 3 },
    { name: 'spend', requests: 4, refused: 1, exempt: 0, keys: 1 },
  ]);
});

test('visitor JWT: its tier claim and subject logged; replay tiers it as the gateway did', async ({
  visitor,
  upstream,
}) => {
  const pro = await visitorJwt({ sid: 'session-1', sub: 'visitor-1', plan: 'pro' });
  const plain = await visitorJwt({ sid: 'session-2' });
  const { statuses, lines } = await sendAll(visitor.url(), visitorLog, [
    ...Array.from({ length: 3 }, () => ({ path: '/v/a', headers: { 'x-widget-token': pro } })),
    ...Array.from({ length: 2 }, () => ({ path: '/v/a', headers: { authorization: `Bearer ${plain}` } })),
  ]);
  expect(statuses).toEqual([200, 200, 429, 200, 429]);
  const at = (status: number, f: object) => ({
    status,
    client: '127.0.0.1',
    charged: undefined,
    workspace: undefined, // no token's facts are read
    ...f,
  });
  // Without an Authorization header there is no workspace token (null); with one, it was not checked.
  expect(lines.map(fieldsOf)).toEqual([
    ...[200, 200, 429].map((s) => at(s, { tier: 'pro', sub: 'visitor-1', token: null })),
    ...[200, 429].map((s) => at(s, { tier: null, sub: null, token: undefined })),
  ]);
  expect(lines[0]!['keys']).toMatchObject({ jwt: hashPart('jwt=session-1') });
  expect(JSON.stringify(lines)).not.toContain(pro);

  const report = await replay(VISITOR, lines, { UPSTREAM_URL: upstream.url });
  expect(report.warnings).toEqual([]);
  expect(
    report.routes.map(({ name, requests, refused, tiers }) => ({ name, requests, refused, tiers })),
  ).toEqual([
    { name: 'visits', requests: 5, refused: 2, tiers: { 'pro (jwt)': 3, default: 2 } },
    { name: 'listed', requests: 0, refused: 0, tiers: {} },
  ]);
});

test('an allow list by workspace: the token and the workspace the list looked up logged; replay exempts as the gateway did', async ({
  visitor,
  upstream,
}) => {
  const as = (token: string) => ({ path: '/l/x', headers: { authorization: `Bearer ${token}` } });
  const { statuses, lines } = await sendAll(visitor.url(), visitorLog, [
    as('t-free|s3cret'),
    as('t-free|s3cret'),
    as('t-pro|s3cret'),
    as('t-pro|s3cret'),
    as('t-pro|wrong'), // counted by its per-IP fallback, then refused 401
  ]);
  expect(statuses).toEqual([200, 200, 200, 429, 401]);
  const at = (status: number, token: string | null, workspace: string | null) => ({
    status,
    client: '127.0.0.1',
    tier: undefined,
    token,
    workspace,
    sub: undefined,
    charged: undefined,
  });
  expect(lines.map(fieldsOf)).toEqual([
    at(200, 't-free', 'ws-2'),
    at(200, 't-free', 'ws-2'),
    at(200, 't-pro', 'ws-1'),
    at(429, 't-pro', 'ws-1'),
    at(401, null, null),
  ]);
  expect(JSON.stringify(lines)).not.toContain('s3cret');

  const report = await replay(VISITOR, lines, { UPSTREAM_URL: upstream.url });
  expect(report.warnings).toEqual([]);
  expect(report.routes.find((r) => r.name === 'listed')).toMatchObject({ requests: 5, refused: 1 });
  expect(report.limiters.find((l) => l.name === 'keyed')).toMatchObject({
    requests: 3,
    refused: 1,
    exempt: 2,
    keys: 2,
  });
});
