// `tollgate explain` with a Redis store reads what a running gateway applies: the admin API's
// overrides (kept in the store) merged with the file's, says which override chose the tier and
// where it came from, and prints the refusal of a ban in force. A real gateway sets the override and
// earns the ban; explain reads them from the same real redis-server.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, vi } from 'vitest';
import { explain } from '../../src/cli/explain.js';
import { test as base } from '../helpers/fixtures.js';
import { send } from '../helpers/gateway.js';

const ADMIN = 'explain-store-admin';

const config = (redisUrl: string, upstreamUrl: string, overridesFile: string) => `
listeners: [{ host: 127.0.0.1, port: 0 }]
admin: { host: 127.0.0.1, port: 0, token: '${ADMIN}' }
store: { redis: { url: '${redisUrl}', commandTimeout: 2s, keyPrefix: 'explain-store:' } }
identity: { trustedProxies: [127.0.0.1] }
tiers:
  overrides: { file: '${overridesFile}', pollInterval: 200ms }
upstreams: { app: { url: '${upstreamUrl}' } }
limiters:
  api:
    windows: [{ limit: 2, period: 1h, key: [ip], tiers: { pro: { limit: 50 } } }]
    ban: { after: 1, within: 1h, for: 1h }
routes:
  - { name: api, paths: ['/*'], upstream: app, limiters: [api] }
`;

const test = base.extend('files', { scope: 'file' }, async ({ redis, upstream }, { onCleanup }) => {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-explain-store-'));
  onCleanup(() => rm(dir, { recursive: true, force: true }));
  const overrides = join(dir, 'overrides.yaml');
  await writeFile(overrides, 'ip:198.51.100.0/24: pro\n');
  const file = join(dir, 'gateway.yaml');
  const text = config(redis.url, upstream.url, overrides);
  await writeFile(file, text);
  return { file, overrides, text };
});

/**
 * What explain prints of the tier an override chose: the override, how many overrides each source
 * holds (the file's one, `inStore` from the admin API) and where the one that applied came from.
 */
function tierLines(overridesFile: string, tier: string, override: string, inStore: number, from: string) {
  return [
    `tier: ${tier} (override ${override})`,
    `overrides: 1 from file ${overridesFile}, ${inStore} from the admin API (store)`,
    `override ${override}: from ${from}`,
  ].join('\n');
}

const FROM_STORE = 'the admin API (store)';

/** explain's output, as printed. */
async function explainOut(file: string, peer: string): Promise<string> {
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    expect(await explain(file, 'GET', '/v1/x', [], peer)).toBe(0);
    return log.mock.calls.map((c) => String(c[0])).join('\n');
  } finally {
    log.mockRestore();
  }
}

test("the file's override, then the admin API's from the store, which wins; both named", async ({
  files,
  gateways,
}) => {
  const fromFile = await explainOut(files.file, '198.51.100.4');
  const fromFileLines = tierLines(
    files.overrides,
    'tier pro',
    'ip:198.51.100.0/24',
    0,
    `file ${files.overrides}`,
  );
  expect(fromFile).toContain(`${fromFileLines}\nlimiter api:`);
  expect(fromFile).toContain('  50 per 1 hour, key parts:');

  const gateway = await gateways.start(files.text);
  const auth = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  const put = async (key: string, body: string) =>
    (await send(`${gateway.adminUrl}/v1/overrides/${key}`, { method: 'PUT', headers: auth, body })).status;
  expect(await put('ip:198.51.100.4', '"unlimited"')).toBe(200);
  expect(await put('ip:198.51.100.0%2F24', '{"limit":9}')).toBe(200);

  const unlimited = await explainOut(files.file, '198.51.100.4');
  expect(unlimited).toContain(tierLines(files.overrides, 'unlimited', 'ip:198.51.100.4/32', 2, FROM_STORE));
  expect(unlimited).toContain('  2 per 1 hour: not counted (unlimited)');
  // The store's entry for the /24 wins over the file's.
  const custom = await explainOut(files.file, '198.51.100.5');
  expect(custom).toContain(tierLines(files.overrides, 'limit 9', 'ip:198.51.100.0/24', 2, FROM_STORE));
  expect(custom).toContain('  9 per 1 hour, key parts:');
});

test('a ban the gateway put in force: explain prints its refusal and end', async ({ files, gateways }) => {
  const before = await explainOut(files.file, '203.0.113.9');
  expect(before).toContain('forwarded as: /v1/x');
  expect(before).toContain('may be refused: 429 banned while api holds this key banned (none in force now)');
  expect(before).toContain(`overrides: 1 from file ${files.overrides}, `);
  expect(before).not.toContain('override ip:');

  const gateway = await gateways.start(files.text);
  const fromClient = () => send(`${gateway.url()}/v1/x`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) statuses.push((await fromClient()).status);
  expect(statuses).toEqual([200, 200, 429, 429]); // the refusal is the strike that bans; then banned
  const banned = (await fromClient()).json();
  expect(banned).toMatchObject({ error: { code: 'banned' } });

  const after = await explainOut(files.file, '203.0.113.9');
  expect(after).toMatch(
    /\nrefused: 429 banned \(Too many requests were refused: this client is banned for a while\.\), by api's ban until \d{4}-\d\d-\d\dT[\d:.]+Z \(Retry-After: 3[56]\d\d\), nothing counted\n/,
  );
  expect(after).not.toContain('forwarded as');
  // Another address: no ban.
  expect(await explainOut(files.file, '203.0.113.10')).toContain('(none in force now)');
});

test('a store that does not answer: the file only, and why', async ({ files }) => {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-explain-nostore-'));
  try {
    const file = join(dir, 'gateway.yaml');
    await writeFile(
      file,
      files.text.replace(/url: 'redis:\/\/[^']+'/, "url: 'redis://127.0.0.1:1', connectTimeout: 300ms"),
    );
    const out = await explainOut(file, '198.51.100.4');
    expect(out).toContain('tier: tier pro (override ip:198.51.100.0/24)');
    expect(out).toMatch(new RegExp(`overrides: 1 from file ${files.overrides}, store not read: .+\\n`));
    expect(out).toContain(`override ip:198.51.100.0/24: from file ${files.overrides}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
