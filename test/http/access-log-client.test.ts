// log.clientAddress: the access log's client field in full (the default), hashed as the ip key
// part is, or left out; a reload changes it for the next request.
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { hashPart } from '../../src/identity/hash.js';
import { loadConfigText } from '../../src/rules/load.js';
import { gatewayTest } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { waitFor } from '../helpers/wait.js';

const config = (mode: string) =>
  gatewayYaml(`
log: { clientAddress: ${mode} }
identity: { trustedProxies: [127.0.0.1] }
upstreams: { app: { url: "\${UPSTREAM_URL}" } }
limiters:
  per-ip: { windows: [{ limit: 100, period: 1m, key: [ip] }] }
routes:
  - { name: app, paths: [/*], upstream: app, limiters: [per-ip] }
`);
const log = capturingLogger();
const test = gatewayTest({ redis: false, config: config('hashed'), options: { logger: log.logger } });

/** The access line of one request from `client` (through the trusted proxy 127.0.0.1). */
async function accessLine(base: string, client: string): Promise<Record<string, unknown>> {
  const id = randomUUID();
  const reply = await send(`${base}/x`, { headers: { 'x-request-id': id, 'x-forwarded-for': client } });
  expect(reply.status).toBe(200);
  const line = await waitFor(
    () => log.lines.find((l) => l['reqId'] === id),
    (l) => l !== undefined,
    { what: `the access line of ${id}`, timeoutMs: 20_000 },
  );
  return line!;
}

test('hashed: the digest the ip key part has, never the address; none: no client; full: the address', async ({
  gateway,
  upstream,
}) => {
  const address = '198.51.100.77';
  const hashed = await accessLine(gateway.url(), address);
  expect(hashed['client']).toBe(hashPart(`ip=${address}`));
  expect(hashed).toMatchObject({ status: 200, route: 'app', limit: 'allowed' });
  expect(JSON.stringify(hashed)).not.toContain(address);

  const env = { UPSTREAM_URL: upstream.url };
  await gateway.reload(loadConfigText(config('none'), 'gateway.yaml', env));
  const none = await accessLine(gateway.url(), address);
  expect(none).not.toHaveProperty('client');
  expect(JSON.stringify(none)).not.toContain(address);

  await gateway.reload(loadConfigText(config('full'), 'gateway.yaml', env));
  expect((await accessLine(gateway.url(), address))['client']).toBe(address);
});
