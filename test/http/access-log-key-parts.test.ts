// log.keyParts: the access log carries the Host and the hashed key parts (never a raw value), so
// that `tollgate replay` can replay the gateway's own log and count as the gateway counted.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { hashPart } from '../../src/identity/hash.js';
import { runCli } from '../helpers/cli.js';
import { gatewayTest } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { waitFor } from '../helpers/wait.js';

const CONFIG = gatewayYaml(`
log: { keyParts: true }
upstreams: { app: { url: "\${UPSTREAM_URL}" } }
limiters:
  two: { windows: [{ limit: 2, period: 1m, key: [ip] }] }
routes:
  - { name: limited, paths: [/limited/*], upstream: app, limiters: [two] }
  - { name: open, paths: [/open/*], upstream: app }
`);
const log = capturingLogger();
const test = gatewayTest({ redis: false, config: CONFIG, options: { logger: log.logger } });

test('each access line has the host and the hashed ip and user agent; replay counts them as the gateway did', async ({
  gateway,
  upstream,
}) => {
  const ids: string[] = [];
  const statuses: number[] = [];
  for (const path of ['/limited/a', '/limited/b', '/limited/c', '/open/d']) {
    const id = randomUUID();
    ids.push(id);
    const reply = await send(`${gateway.url('public')}${path}`, {
      method: 'POST',
      headers: { 'x-request-id': id, 'user-agent': 'probe/1', 'content-type': 'application/json' },
      body: '{"n":1}',
    });
    statuses.push(reply.status);
  }
  expect(statuses).toEqual([200, 200, 429, 200]);
  const lines = await waitFor(
    () => ids.map((id) => log.lines.find((l) => l['reqId'] === id)),
    (found) => found.every(Boolean),
    { what: 'the four access lines', timeoutMs: 20_000 },
  );
  const keys = { ip: hashPart('ip=127.0.0.1'), user_agent: hashPart('ua=probe/1') };
  const host = new URL(gateway.url('public')).host;
  for (const line of lines) expect(line).toMatchObject({ host, keys, bytes: 7 });
  expect(JSON.stringify(lines)).not.toContain('probe/1');

  const dir = mkdtempSync(join(tmpdir(), 'tollgate-keyparts-'));
  writeFileSync(join(dir, 'gateway.yaml'), CONFIG);
  writeFileSync(join(dir, 'access.log'), lines.map((l) => JSON.stringify(l)).join('\n'));
  const run = await runCli(['replay', '--json', '--config', 'gateway.yaml', 'access.log'], {
    cwd: dir,
    env: { UPSTREAM_URL: upstream.url },
  });
  expect(run.code, run.stderr).toBe(0);
  const report = JSON.parse(run.stdout) as { candidate: { routes: unknown[] } };
  const counts = { shadowRefused: 0, banned: 0, denied: 0, lengthRequired: 0, tiers: {} };
  expect(report.candidate.routes).toEqual([
    { name: 'limited', limiters: ['two'], requests: 3, refused: 1, ...counts },
    { name: 'open', limiters: [], requests: 1, refused: 0, ...counts },
  ]);
});
