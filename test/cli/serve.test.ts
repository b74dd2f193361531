import { describe, expect } from 'vitest';
import { startCli, type CliProcess } from '../helpers/cli.js';
import { DEFAULT_CONFIG } from '../helpers/default-config.js';
import { ALICE_KEY, embeddedEnv, newDataDir } from '../helpers/embedded.js';
import { test as base } from '../helpers/fixtures.js';
import { send } from '../helpers/gateway.js';

/** `tollgate serve websites --port 0` as its own process, listening. */
const serveAlone = (dataDir: string): Promise<CliProcess> =>
  startCli(['serve', 'websites', '--port', '0', '--config', 'config/gateway.yaml'], {
    env: embeddedEnv(dataDir, { LOG_LEVEL: 'info' }),
  });

const test = base
  .extend('service', { scope: 'file' }, async ({}, { onCleanup }) => {
    const service = await serveAlone(newDataDir());
    onCleanup(async () => {
      await service.stop();
    });
    return service;
  })
  // The gateway has its own data directory: the service's records live with the service.
  .extend('gateway', { scope: 'file' }, ({ service, gateways }) =>
    gateways.start(DEFAULT_CONFIG, embeddedEnv(newDataDir(), { WEBSITES_UPSTREAM: service.url })),
  );

describe('tollgate serve: one embedded service alone, fronted by a gateway elsewhere', () => {
  test('answers on its own port', async ({ service }) => {
    const reply = await send(`${service.url}/api/v1/websites`, {
      headers: { authorization: `Bearer ${ALICE_KEY}` },
    });
    expect(reply.status).toBe(200);
  });

  test('the gateway forwards to it, and records made through it live in its database', async ({
    service,
    gateway,
  }) => {
    const created = await send(`${gateway.url()}/api/v1/websites`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'url=https://served-alone.example',
    });
    expect(created.status).toBe(201);
    const direct = await send(`${service.url}/api/v1/websites?search=served-alone`, {
      headers: { authorization: `Bearer ${ALICE_KEY}` },
    });
    expect((direct.json() as { data: { url: string }[] }).data.map((w) => w.url)).toEqual([
      'served-alone.example',
    ]);
  });

  test('a missing key is refused by the service, through the gateway', async ({ gateway }) => {
    const reply = await send(`${gateway.url()}/api/v1/websites`, { headers: { accept: 'text/html' } });
    expect(reply.status).toBe(401);
    expect(reply.json()).toEqual({ message: 'Unauthenticated.' });
  });

  test('stops cleanly on SIGTERM', async ({ service }) => {
    service.signal('SIGTERM');
    expect((await service.exit).code).toBe(0);
  });
});
