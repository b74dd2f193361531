// The gateway and the embedded services meet only through the interface the CLI wires in: a
// pure-proxy config never loads the services' code, and a config (or a reload) that names a
// service loads it then.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect } from 'vitest';
import { loadConfigText } from '../../src/rules/load.js';
import { startGatewayProcess } from '../helpers/cli.js';
import { newDataDir } from '../helpers/embedded.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';

/** The CommonJS packages only the services use. */
const SERVICE_PACKAGES = ['better-sqlite3', 'fastify', 'piscina'];
const UNAUTHENTICATED = { message: 'Unauthenticated.' };

const PROBE = pathToFileURL(join(import.meta.dirname, '..', 'helpers', 'loaded-packages.mjs')).href;

/** One remote upstream, one limiter, the memory store; `services` settings, but no upstream names one. */
const pureProxy = (upstreamUrl: string, services = '') =>
  gatewayYaml(`
reload: { watch: false }
identity: { workspaceTokens: { source: static } }
${services}
upstreams:
  app: { url: '${upstreamUrl}' }
limiters:
  per-ip: { windows: [{ limit: 100, period: 1m, key: [ip] }] }
routes:
  - { name: all, paths: ['/*'], upstream: app, limiters: [per-ip] }
`);

const servicesIn = (dataDir: string) =>
  `services: { dataDir: '${dataDir}', bootstrapApiKeys: [tg_boundary_key_0123456789] }`;

/** The pure proxy plus /api/v1/websites* on the embedded websites service. */
const withWebsites = (upstreamUrl: string, dataDir: string) =>
  gatewayYaml(`
reload: { watch: false }
identity: { workspaceTokens: { source: static } }
${servicesIn(dataDir)}
upstreams:
  app: { url: '${upstreamUrl}' }
  site: { embedded: websites }
limiters:
  per-ip: { windows: [{ limit: 100, period: 1m, key: [ip] }] }
routes:
  - { name: websites, paths: ['/api/v1/websites*'], upstream: site, limiters: [per-ip] }
  - { name: all, paths: ['/*'], upstream: app, limiters: [per-ip] }
`);

/** `dir` for the config files of `tollgate start`. */
const test = serversTest.extend('dir', { scope: 'file' }, async ({}, { onCleanup }) => {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-boundary-'));
  onCleanup(() => rm(dir, { recursive: true, force: true }));
  return dir;
});

/** Runs `tollgate start` on the config, sends one request, stops it; the packages it loaded, and the reply. */
async function startAndSend(dir: string, yaml: string, path: string) {
  const file = join(dir, `${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, yaml);
  const gateway = await startGatewayProcess(file, { env: { NODE_OPTIONS: `--import=${PROBE}` } });
  let reply;
  try {
    reply = await send(`${gateway.url}${path}`);
  } finally {
    expect(await gateway.stop()).toBe(0);
  }
  const line = /^loaded packages: (.*)$/m.exec(gateway.stderr);
  expect(line, gateway.stderr).not.toBeNull();
  return { reply, loaded: JSON.parse(line![1]!) as string[] };
}

describe('tollgate start', () => {
  test('a pure-proxy config forwards without ever loading fastify, SQLite or the analysis threads', async ({
    dir,
    upstream,
  }) => {
    const { reply, loaded } = await startAndSend(dir, pureProxy(upstream.url), '/hello');
    expect(reply.status).toBe(200);
    expect(upstream.seen.at(-1)).toMatchObject({ method: 'GET', url: '/hello' });
    expect(loaded).toContain('undici'); // the probe sees the gateway's own packages
    expect(loaded.filter((p) => SERVICE_PACKAGES.includes(p))).toEqual([]);
  });

  test('a config whose upstream names a service loads it and forwards to it', async ({ dir, upstream }) => {
    const { reply, loaded } = await startAndSend(
      dir,
      withWebsites(upstream.url, newDataDir()),
      '/api/v1/websites',
    );
    expect(reply.status).toBe(401);
    expect(reply.json()).toEqual(UNAUTHENTICATED);
    expect(loaded).toEqual(expect.arrayContaining(['better-sqlite3', 'fastify']));
  });
});

describe('a gateway that started as a pure proxy', () => {
  test('loads and starts a service when a reload first names it', async ({ upstream, gateways }) => {
    // services.* is read at start (it changes only on restart), so it is there from the start.
    const dataDir = newDataDir();
    const gateway = await gateways.start(pureProxy(upstream.url, servicesIn(dataDir)));
    const before = await send(`${gateway.url()}/api/v1/websites`);
    expect(before.status).toBe(200);
    expect(upstream.seen.at(-1)).toMatchObject({ url: '/api/v1/websites' });

    await gateway.reload(loadConfigText(withWebsites(upstream.url, dataDir), 'reloaded.yaml', {}));
    const seen = upstream.seen.length;
    const after = await send(`${gateway.url()}/api/v1/websites`);
    expect(after.status).toBe(401);
    expect(after.json()).toEqual(UNAUTHENTICATED);
    const listed = await send(`${gateway.url()}/api/v1/websites`, {
      headers: { authorization: 'Bearer tg_boundary_key_0123456789' },
    });
    expect(listed.status).toBe(200);
    expect(listed.json()).toMatchObject({ data: [], meta: { total: 0 } });
    expect(upstream.seen.length).toBe(seen); // neither reached the remote upstream
  });
});
