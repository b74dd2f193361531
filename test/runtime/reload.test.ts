// Hot reload: in process (Gateway.reload), and in a real `tollgate start` process (file watch, SIGHUP).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { loadConfigText } from '../../src/rules/load.js';
import { createStore } from '../../src/store/create-store.js';
import { runCli, startGatewayProcess, type CliProcess } from '../helpers/cli.js';
import { clientAddresses } from '../helpers/clients.js';
import { CountingStore } from '../helpers/counting-store.js';
import { replaceFile } from '../helpers/files.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml, limitHeaders, send, type Reply } from '../helpers/gateway.js';
import { sampleValue, scrape } from '../helpers/prometheus.js';
import { TestUpstream } from '../helpers/upstream.js';
import { waitFor } from '../helpers/wait.js';

const ROUTE_NOT_FOUND = '{"error":{"code":"route_not_found","message":"No route matches this request."}}';

/**
 * Two upstreams the reloads move /slow between (`slow` absent: no such route); /app/* stays on
 * the old one. Every route shares the per-ip limiter.
 */
function config(o: { limit: number; slow?: 'old' | 'new'; app?: 'old' | 'new' }): string {
  return gatewayYaml(`
store:
  redis: { url: '\${REDIS_URL}', commandTimeout: 2s }
identity:
  trustedProxies: [127.0.0.1]
upstreams:
  old: { url: '\${OLD_URL}' }
  new: { url: '\${NEW_URL}' }
limiters:
  per-ip:
    windows: [{ limit: ${o.limit}, period: 1m, key: [ip] }]
routes:
${o.slow ? `  - { name: slow, paths: [/slow], upstream: ${o.slow}, limiters: [per-ip] }` : ''}
  - { name: app, paths: ['/app/*'], upstream: ${o.app ?? 'old'}, limiters: [per-ip] }
`);
}

/**
 * The file's upstream is the old one; the gateway counts in the file's Redis through a store
 * that tells when a request has reached it.
 */
const inProcessTest = serversTest
  .extend('newUpstream', { scope: 'file' }, async ({}, { onCleanup }) => {
    const upstream = await TestUpstream.start();
    onCleanup(() => upstream.close());
    return upstream;
  })
  .extend('env', { scope: 'file' }, ({ redis, upstream, newUpstream }) => ({
    REDIS_URL: redis.url,
    OLD_URL: upstream.url,
    NEW_URL: newUpstream.url,
  }))
  .extend('store', { scope: 'file' }, ({ env }) => {
    const table = loadConfigText(config({ limit: 5, slow: 'old' }), 'test.yaml', env);
    return new CountingStore(createStore(table.config.store));
  })
  .extend('gateway', { scope: 'file' }, ({ gateways, env, store }) =>
    gateways.start(config({ limit: 5, slow: 'old' }), env, { store }),
  )
  .extend('reload', { scope: 'file' }, ({ gateway, env }) => {
    return (o: Parameters<typeof config>[0]) =>
      gateway.reload(loadConfigText(config(o), 'reloaded.yaml', env));
  })
  .extend('get', { scope: 'file' }, ({ gateway }) => {
    return (ip: string, path: string) =>
      send(`${gateway.url()}${path}`, { headers: { 'x-forwarded-for': ip } });
  });

describe('Gateway.reload in process', () => {
  const test = inProcessTest;
  const newClient = clientAddresses();
  const seenBy = (upstream: TestUpstream, url: string) => upstream.seen.filter((s) => s.url === url).length;

  function expectCounted(reply: Reply, limit: number, remaining: number): void {
    expect(reply.status).toBe(200);
    expect(limitHeaders(reply)).toEqual({
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-reset': expect.stringMatching(/^\d+$/) as unknown as string,
    });
  }

  test('counters survive a reload: remaining continues where it was', async ({ get, reload }) => {
    const ip = newClient();
    expectCounted(await get(ip, '/app/a'), 5, 4);
    expectCounted(await get(ip, '/app/a'), 5, 3);
    await reload({ limit: 5, slow: 'new' }); // a change elsewhere
    expectCounted(await get(ip, '/app/a'), 5, 2);
    expectCounted(await get(ip, '/app/a'), 5, 1);
    await reload({ limit: 5, slow: 'old' });
    expectCounted(await get(ip, '/app/a'), 5, 0);
    const refused = await get(ip, '/app/a');
    expect(refused.status).toBe(429);
    expect(refused.headers['x-ratelimit-limit']).toBe('5');
  });

  test('a changed limit applies at once to the running counters', async ({ get, reload }) => {
    const ip = newClient();
    for (const remaining of [4, 3, 2]) expectCounted(await get(ip, '/app/b'), 5, remaining);
    await reload({ limit: 10, slow: 'old' });
    expectCounted(await get(ip, '/app/b'), 10, 6); // the 4th hit of 10
    expectCounted(await get(ip, '/app/b'), 10, 5);

    // Lowered below the 5 hits already counted: refused at once, by the new limit.
    await reload({ limit: 4, slow: 'old' });
    const refused = await get(ip, '/app/b');
    expect(refused.status).toBe(429);
    expect(refused.text).toBe('{"error":{"code":"rate_limited","message":"Too Many Attempts."}}');
    expect(refused.headers['x-ratelimit-limit']).toBe('4');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    await reload({ limit: 5, slow: 'old' });
  });

  test('a request in flight when its route moves to another upstream finishes on the old one', async ({
    get,
    reload,
    upstream: oldUpstream,
    newUpstream,
  }) => {
    const ip = newClient();
    const inFlight = get(ip, '/slow?ms=1500');
    await waitFor(
      () => seenBy(oldUpstream, '/slow?ms=1500'),
      (n) => n === 1,
      { timeoutMs: 5000, what: 'the slow request to reach the old upstream' },
    );
    await reload({ limit: 5, slow: 'new' });

    // New requests already go to the new upstream...
    const moved = await get(ip, '/slow?ms=0');
    expectCounted(moved, 5, 3);
    expect(seenBy(newUpstream, '/slow?ms=0')).toBe(1);
    expect(seenBy(oldUpstream, '/slow?ms=0')).toBe(0);

    // ...while the one in flight gets its answer from the old one, whose pool closed behind it.
    const reply = await inFlight;
    expectCounted(reply, 5, 4);
    expect(reply.json()).toMatchObject({ method: 'GET', url: '/slow?ms=1500' });
    expect(seenBy(newUpstream, '/slow?ms=1500')).toBe(0);
  });

  test('a request in flight when its route is removed still gets its answer', async ({
    get,
    reload,
    newUpstream,
  }) => {
    const ip = newClient();
    await reload({ limit: 5, slow: 'new' });
    const inFlight = get(ip, '/slow?ms=1000');
    await waitFor(
      () => seenBy(newUpstream, '/slow?ms=1000'),
      (n) => n === 1,
      { timeoutMs: 5000, what: 'the slow request to reach the upstream' },
    );
    await reload({ limit: 5 }); // no /slow route any more

    const gone = await get(ip, '/slow?ms=0');
    expect(gone.status).toBe(404);
    expect(gone.text).toBe(ROUTE_NOT_FOUND);
    expect(limitHeaders(gone)).toEqual({});

    const reply = await inFlight;
    expectCounted(reply, 5, 4);
    expect(reply.json()).toMatchObject({ method: 'GET', url: '/slow?ms=1000' });
    await reload({ limit: 5, slow: 'old' });
  });

  test('a request waiting on the store during a reload is forwarded under the table it started with', async ({
    get,
    reload,
    redis,
    store,
    upstream: oldUpstream,
    newUpstream,
  }) => {
    const ip = newClient();
    const frozen = redis.freeze();
    let inFlight: Promise<Reply>;
    try {
      const asked = store.asked;
      inFlight = get(ip, '/app/frozen');
      // It has matched its route and now waits on Redis (command timeout: 2 s).
      await waitFor(
        () => store.asked,
        (n) => n === asked + 1,
        { what: 'the request to reach the store' },
      );
      await reload({ limit: 5, slow: 'old', app: 'new' });
    } finally {
      frozen.thaw();
    }
    const reply = await inFlight;
    expect(reply.status).toBe(200); // the old table's upstream pool is still open for it
    expectCounted(reply, 5, 4);
    expect(reply.json()).toMatchObject({ method: 'GET', url: '/app/frozen' });
    expect(seenBy(oldUpstream, '/app/frozen')).toBe(1);
    expect(seenBy(newUpstream, '/app/frozen')).toBe(0);

    // The next request follows the new table.
    expectCounted(await get(ip, '/app/frozen'), 5, 3);
    expect(seenBy(newUpstream, '/app/frozen')).toBe(1);
    await reload({ limit: 5, slow: 'old' });
  });
});

/** A config file's text; `upstream` "ghost" makes it invalid (an unknown upstream). */
function configText(upstreamUrl: string, o: { limit: number; watch: boolean; upstream?: string }): string {
  return gatewayYaml(
    `
reload: { watch: ${o.watch} }
upstreams:
  app: { url: '${upstreamUrl}' }
limiters:
  per-ip:
    windows: [{ limit: ${o.limit}, period: 1m, key: [ip] }]
routes:
  - { name: app, paths: ['/*'], upstream: ${o.upstream ?? 'app'}, limiters: [per-ip] }
`,
    { admin: true },
  );
}

/** `tollgate start` on a file of its own folder (the watch is on the folder), stopped after the test. */
const processTest = serversTest
  .extend('dir', { scope: 'file' }, async ({}, { onCleanup }) => {
    const dir = await mkdtemp(join(tmpdir(), 'tollgate-reload-'));
    onCleanup(() => rm(dir, { recursive: true, force: true }));
    return dir;
  })
  .extend('startProcess', async ({ dir }, { onCleanup }) => {
    const processes: CliProcess[] = [];
    onCleanup(async () => {
      await Promise.all(processes.map((p) => p.stop()));
    });
    return async (name: string, text: string): Promise<{ gp: CliProcess; file: string }> => {
      const file = join(await mkdtemp(join(dir, `${name}-`)), 'gateway.yaml');
      await writeFile(file, text);
      const gp = await startGatewayProcess(file, { admin: true });
      processes.push(gp);
      return { gp, file };
    };
  });

describe('tollgate start reloads its config file', () => {
  const test = processTest;
  const limitOf = async (gp: CliProcess) => (await send(`${gp.url}/x`)).headers['x-ratelimit-limit'];
  const reloadsOf = async (gp: CliProcess) => {
    const text = await scrape(gp.adminUrl);
    return {
      success: sampleValue(text, 'tollgate_config_reloads_total{result="success"}'),
      failure: sampleValue(text, 'tollgate_config_reloads_total{result="failure"}'),
    };
  };
  const logged = (gp: CliProcess, msg: string) => gp.logs().filter((l) => l.msg === msg);

  test('file watch: an edit applies, an invalid file is refused with file:line:col and the old config serves on', async ({
    upstream,
    startProcess,
  }) => {
    const fileText = (o: Parameters<typeof configText>[1]) => configText(upstream.url, o);
    const { gp, file } = await startProcess('watch', fileText({ limit: 100, watch: true }));
    expect(await limitOf(gp)).toBe('100');
    expect(gp.fileWatches()).toBe(1); // the folder's
    expect(await reloadsOf(gp)).toEqual({ success: 0, failure: 0 });

    // Edited in place (truncate and write in one synchronous step, so no reload can read it half-written).
    await replaceFile(file, fileText({ limit: 200, watch: true }));
    await waitFor(
      () => limitOf(gp),
      (limit) => limit === '200',
      { timeoutMs: 10_000, what: 'the edited limit to apply' },
    );
    // The log line may reach stdout after the new limit answers on the socket: wait for it.
    const reloaded = await gp.waitForLog((l) => l.msg === 'config reloaded', { what: 'the reload log line' });
    expect(reloaded).toHaveLength(1);
    // It says what changed, with the old and new limits (src/rules/diff.ts).
    expect(reloaded[0]!['changes']).toEqual({
      limiters: {
        added: [],
        removed: [],
        changed: [
          {
            name: 'per-ip',
            from: '100/1m by ip (on store error: open); message: Too Many Attempts.',
            to: '200/1m by ip (on store error: open); message: Too Many Attempts.',
          },
        ],
      },
      routes: { added: [], removed: [], changed: [] },
    });
    expect(await reloadsOf(gp)).toEqual({ success: 1, failure: 0 });

    // Replaced by an invalid file (written next to it and renamed over it, as editors do).
    const invalid = fileText({ limit: 300, watch: true, upstream: 'ghost' });
    await replaceFile(file, invalid);
    const failures = await waitFor(
      () => logged(gp, 'config reload failed: keeping the running config'),
      (lines) => lines.length > 0,
      { timeoutMs: 10_000, what: 'the reload failure to be logged' },
    );
    const lines = invalid.split('\n');
    const line = lines.findIndex((l) => l.includes('ghost')) + 1;
    const col = lines[line - 1]!.indexOf('ghost') + 1;
    expect([line, col]).toEqual([11, 43]);
    const location = `${file}:${line}:${col}: routes[0].upstream: unknown upstream "ghost"`;
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ level: 50, err: location });

    const still = await send(`${gp.url}/x`);
    expect(still.status).toBe(200);
    expect(still.headers['x-ratelimit-limit']).toBe('200');
    expect(still.json()).toMatchObject({ url: '/x' });
    expect(await reloadsOf(gp)).toEqual({ success: 1, failure: 1 });

    const check = await runCli(['check', '--config', file]);
    expect(check.code).toBe(1);
    expect(check.stderr).toBe(`invalid config:\n${location}\n`);

    // Fixed again: applies.
    await replaceFile(file, fileText({ limit: 300, watch: true }));
    await waitFor(
      () => limitOf(gp),
      (limit) => limit === '300',
      { timeoutMs: 10_000, what: 'the fixed file to apply' },
    );
    expect(await reloadsOf(gp)).toEqual({ success: 2, failure: 1 });
    expect(gp.stderr).toBe('');
    expect(await gp.stop()).toBe(0);
  }, 60_000);

  test('with reload.watch false, an edit waits for SIGHUP', async ({ upstream, startProcess }) => {
    const fileText = (o: Parameters<typeof configText>[1]) => configText(upstream.url, o);
    const { gp, file } = await startProcess('sighup', fileText({ limit: 100, watch: false }));
    expect(await limitOf(gp)).toBe('100');

    await writeFile(file, fileText({ limit: 150, watch: false }));
    // Nothing watches the file, so nothing can take the edit up before SIGHUP does.
    expect(gp.fileWatches()).toBe(0);
    expect(await limitOf(gp)).toBe('100');
    expect(logged(gp, 'config reloaded')).toHaveLength(0);
    expect(await reloadsOf(gp)).toEqual({ success: 0, failure: 0 });

    gp.signal('SIGHUP');
    await waitFor(
      () => limitOf(gp),
      (limit) => limit === '150',
      { timeoutMs: 10_000, what: 'the SIGHUP reload to apply' },
    );
    // The log line may reach stdout after the new limit answers on the socket: wait for it.
    expect(
      await gp.waitForLog((l) => l.msg === 'config reloaded', { what: 'the reload log line' }),
    ).toHaveLength(1);
    expect(await reloadsOf(gp)).toEqual({ success: 1, failure: 0 });
    expect(gp.stderr).toBe('');
    expect(await gp.stop()).toBe(0);
  }, 60_000);
});
