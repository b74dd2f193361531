import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Gateway } from '../src/http/gateway.js';
import { ALICE_KEY, embeddedEnv, newDataDir, startEmbeddedGateway } from './helpers/embedded.js';
import { send } from './helpers/gateway.js';
import { waitFor } from './helpers/resilience-wait.js';

/** `tollgate serve websites --port 0` as its own process; resolves with its address once it listens. */
async function serveAlone(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli.ts', 'serve', 'websites', '--port', '0', '--config', 'config/gateway.yaml'],
    {
      env: { ...process.env, ...embeddedEnv(dataDir, { LOG_LEVEL: 'info' }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = await waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`serve exited early:\n${out}`);
      const line = out.split('\n').find((l) => l.includes('"msg":"listening"'));
      return line ? String((JSON.parse(line) as { url: string }).url) : undefined;
    },
    (u) => u !== undefined,
    { timeoutMs: 20_000, what: 'tollgate serve to listen' },
  );
  return { child, url: url! };
}

describe('tollgate serve: one embedded service alone, fronted by a gateway elsewhere', () => {
  let service: { child: ChildProcess; url: string };
  let gateway: Gateway;

  beforeAll(async () => {
    service = await serveAlone(newDataDir());
    // The gateway has its own data directory: the service's records live with the service.
    gateway = await startEmbeddedGateway(newDataDir(), { WEBSITES_UPSTREAM: service.url });
  });
  afterAll(async () => {
    await gateway?.close();
    if (service && service.child.exitCode === null) {
      const exited = once(service.child, 'exit');
      service.child.kill('SIGTERM');
      await exited;
    }
  });

  test('answers on its own port', async () => {
    const reply = await send(`${service.url}/api/v1/websites`, {
      headers: { authorization: `Bearer ${ALICE_KEY}` },
    });
    expect(reply.status).toBe(200);
  });

  test('the gateway forwards to it, and records made through it live in its database', async () => {
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

  test('a missing key is refused by the service, through the gateway', async () => {
    const reply = await send(`${gateway.url()}/api/v1/websites`, { headers: { accept: 'text/html' } });
    expect(reply.status).toBe(401);
    expect(reply.json()).toEqual({ message: 'Unauthenticated.' });
  });

  test('stops cleanly on SIGTERM', async () => {
    const exited = once(service.child, 'exit') as Promise<[number | null]>;
    service.child.kill('SIGTERM');
    expect((await exited)[0]).toBe(0);
  });
});
