// Certificate reload in a real `tollgate start` process: on a file change (the config watch's
// mechanism) and on SIGHUP; a bad certificate keeps the running one.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { selfSigned } from '../../helpers/certificates.js';
import { startGatewayProcess, type CliProcess } from '../../helpers/cli.js';
import { test as serversTest } from '../../helpers/fixtures.js';
import { replaceFile } from '../../helpers/files.js';
import { peerFingerprint } from '../../helpers/h2-client.js';
import { sampleValue, scrape } from '../../helpers/prometheus.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-tls-process-'));
const live = { cert: join(dir, 'live.pem'), key: join(dir, 'live.key') };

const FAILED = 'certificate reload failed: keeping the running certificate';
const failures = async (gateway: CliProcess) =>
  sampleValue(await scrape(gateway.adminUrl), 'tollgate_config_reloads_total{result="failure"}');
const port = (gateway: CliProcess) => Number(new URL(gateway.url).port);

/**
 * - `certs`: two certificates, and `ca` trusting both;
 * - `gateway`: `tollgate start` with an https listener on `live` (`first` at the start), before the file's upstream.
 */
const test = serversTest
  .extend('certs', { scope: 'file' }, async () => {
    const first = selfSigned(dir, 'first');
    const second = selfSigned(dir, 'second');
    return { first, second, ca: Buffer.concat([first.pem, second.pem]) };
  })
  .extend('gateway', { scope: 'file' }, async ({ certs: { first }, upstream }, { onCleanup }) => {
    await replaceFile(live.cert, await readFile(first.cert, 'utf8'));
    await replaceFile(live.key, await readFile(first.key, 'utf8'));
    const config = join(dir, 'gateway.yaml');
    writeFileSync(
      config,
      `listeners:
  - { name: tls, host: 127.0.0.1, port: 0, tls: { cert: '${live.cert}', key: '${live.key}' } }
admin: { host: 127.0.0.1, port: 0 }
upstreams: { app: { url: '${upstream.url}' } }
routes: [{ name: all, paths: ['/*'], upstream: app }]
`,
    );
    const gateway = await startGatewayProcess(config, { admin: true });
    onCleanup(async () => {
      await gateway.stop();
    });
    return gateway;
  });

test('the listener is https, and a changed certificate file is picked up by new connections', async ({
  certs: { first, second, ca },
  gateway,
}) => {
  expect(gateway.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  expect(await peerFingerprint(port(gateway), { ca })).toBe(first.fingerprint);
  await replaceFile(live.key, await readFile(second.key, 'utf8'));
  await replaceFile(live.cert, await readFile(second.cert, 'utf8'));
  await gateway.waitForLog(
    (l) => l.msg === 'certificates reloaded' && l['fingerprint'] === second.fingerprint,
    {
      what: 'the certificate reload',
    },
  );
  expect(await peerFingerprint(port(gateway), { ca })).toBe(second.fingerprint);
});

test('a bad certificate file keeps the running one (logged with its file, counted); SIGHUP reloads too', async ({
  certs: { second, ca },
  gateway,
}) => {
  const before = (await failures(gateway))!;
  const logged = gateway.logs().filter((l) => l.msg === FAILED).length;
  await replaceFile(live.cert, 'not a certificate\n');
  const [line] = (await gateway.waitForLog((l) => l.msg === FAILED, { count: logged + 1 })).slice(-1);
  expect(line).toMatchObject({ level: 50, listener: 'tls', file: live.cert });
  expect(await failures(gateway)).toBe(before + 1);
  expect(await peerFingerprint(port(gateway), { ca })).toBe(second.fingerprint);

  // SIGHUP (no file changed since): read again, refused again.
  gateway.signal('SIGHUP');
  await gateway.waitForLog((l) => l.msg === FAILED, { count: logged + 2, what: 'the reload on SIGHUP' });
  expect(await failures(gateway)).toBe(before + 2);
  expect(await peerFingerprint(port(gateway), { ca })).toBe(second.fingerprint);
});
