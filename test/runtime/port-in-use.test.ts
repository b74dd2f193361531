// Issue 18, low finding: `tollgate start` with its public or admin port taken printed a raw
// EADDRINUSE stack trace, after the embedded services had started (first-start key logged, database
// created). Now it prints one line naming the address and the listener, and exits 1 before the
// store or the services start.
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { describe, expect } from 'vitest';
import { ListenError } from '../../src/runtime/listen.js';
import { runCli } from '../helpers/cli.js';
import { startGateway } from '../helpers/gateway.js';
import { firstStartEnv, newDataDir } from '../helpers/embedded.js';
import { test as serversTest } from '../helpers/fixtures.js';

/** `port`: a port in use on 127.0.0.1, by another process's socket as far as the gateway can tell. */
const test = serversTest.extend('port', { scope: 'file' }, async ({}, { onCleanup }) => {
  const taken: Server = createServer().listen(0, '127.0.0.1');
  await once(taken, 'listening');
  onCleanup(() => new Promise<void>((resolve) => taken.close(() => resolve())));
  return (taken.address() as AddressInfo).port;
});

/** `tollgate start` on the shipped config, its embedded services on a fresh data directory. */
async function start(ports: { PORT: string; ADMIN_PORT: string }, extra: Record<string, string> = {}) {
  const dataDir = newDataDir();
  const result = await runCli(['start', '--config', 'config/gateway.yaml'], {
    env: firstStartEnv(dataDir, { ...ports, ...extra }),
  });
  return { ...result, dataFiles: readdirSync(dataDir) };
}

/** One line naming the port and the listener, exit 1; no first start (its key is logged once), no database. */
function expectRefused(
  result: Awaited<ReturnType<typeof start>>,
  port: number,
  listener: 'public' | 'admin',
): void {
  expect(result.stderr).toBe(
    `cannot start: cannot listen on 127.0.0.1:${port} (${listener} listener): address already in use\n`,
  );
  expect(result.code).toBe(1);
  expect(result.stdout).toBe('');
  expect(result.dataFiles).toEqual([]);
}

describe('tollgate start with a port already in use', () => {
  test('the public port: one line, exit 1, nothing started', async ({ port }) => {
    const result = await start({ PORT: String(port), ADMIN_PORT: '0' });
    expectRefused(result, port, 'public');
  });

  test('the admin port: one line, exit 1, nothing started', async ({ port }) => {
    const result = await start({ PORT: '0', ADMIN_PORT: String(port) });
    expectRefused(result, port, 'admin');
  });

  test('with workers: the primary says so once, instead of forking workers that die, forever', async ({
    redis,
    port,
  }) => {
    const result = await start(
      { PORT: String(port), ADMIN_PORT: '0' },
      { WORKERS: '2', REDIS_URL: redis.url },
    );
    expectRefused(result, port, 'public');
  });

  test('a port taken after the check (a race): the gateway fails with the same error, and closes', async ({
    port,
  }) => {
    const yaml = `
listeners:
  - { name: edge, host: 127.0.0.1, port: ${port} }
upstreams: { app: { url: 'http://127.0.0.1:9' } }
routes: [{ name: all, paths: ['/*'], upstream: app }]
`;
    const started = startGateway(yaml);
    await expect(started).rejects.toThrow(ListenError);
    await expect(started).rejects.toThrow(
      `cannot listen on 127.0.0.1:${port} (edge listener): address already in use`,
    );
  });

  test("Envoy's rate-limit service port taken after the check: the same one-line error", async ({ port }) => {
    const yaml = `
listeners:
  - { name: edge, host: 127.0.0.1, port: 0 }
rateLimitService: { host: 127.0.0.1, port: ${port} }
upstreams: { app: { url: 'http://127.0.0.1:9' } }
routes: [{ name: all, paths: ['/*'], upstream: app }]
`;
    await expect(startGateway(yaml)).rejects.toThrow(
      new ListenError({ host: '127.0.0.1', port, what: 'rate-limit service' }, 'EADDRINUSE'),
    );
  });
});
