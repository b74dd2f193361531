// Certificate reload in a real `tollgate start` process: on a file change (the config watch's
// mechanism) and on SIGHUP; a bad certificate keeps the running one.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { selfSigned, type CertificateFiles } from '../../helpers/certificates.js';
import { startGatewayProcess, type CliProcess } from '../../helpers/cli.js';
import { replaceFile } from '../../helpers/files.js';
import { peerFingerprint } from '../../helpers/h2-client.js';
import { sampleValue, scrape } from '../../helpers/prometheus.js';
import { TestUpstream } from '../../helpers/upstream.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-tls-process-'));
const live = { cert: join(dir, 'live.pem'), key: join(dir, 'live.key') };
let first: CertificateFiles;
let second: CertificateFiles;
let upstream: TestUpstream;
let gateway: CliProcess;

const FAILED = 'certificate reload failed: keeping the running certificate';
const failures = async () =>
  sampleValue(await scrape(gateway.adminUrl), 'tollgate_config_reloads_total{result="failure"}');

beforeAll(async () => {
  first = selfSigned(dir, 'first');
  second = selfSigned(dir, 'second');
  await replaceFile(live.cert, await readFile(first.cert, 'utf8'));
  await replaceFile(live.key, await readFile(first.key, 'utf8'));
  upstream = await TestUpstream.start();
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
  gateway = await startGatewayProcess(config, { admin: true });
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

const port = () => Number(new URL(gateway.url).port);
const ca = () => Buffer.concat([first.pem, second.pem]);

test('the listener is https, and a changed certificate file is picked up by new connections', async () => {
  expect(gateway.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  expect(await peerFingerprint(port(), { ca: ca() })).toBe(first.fingerprint);
  await replaceFile(live.key, await readFile(second.key, 'utf8'));
  await replaceFile(live.cert, await readFile(second.cert, 'utf8'));
  await gateway.waitForLog(
    (l) => l.msg === 'certificates reloaded' && l['fingerprint'] === second.fingerprint,
    {
      what: 'the certificate reload',
    },
  );
  expect(await peerFingerprint(port(), { ca: ca() })).toBe(second.fingerprint);
});

test('a bad certificate file keeps the running one (logged with its file, counted); SIGHUP reloads too', async () => {
  const before = (await failures())!;
  const logged = gateway.logs().filter((l) => l.msg === FAILED).length;
  await replaceFile(live.cert, 'not a certificate\n');
  const [line] = (await gateway.waitForLog((l) => l.msg === FAILED, { count: logged + 1 })).slice(-1);
  expect(line).toMatchObject({ level: 50, listener: 'tls', file: live.cert });
  expect(await failures()).toBe(before + 1);
  expect(await peerFingerprint(port(), { ca: ca() })).toBe(second.fingerprint);

  // SIGHUP (no file changed since): read again, refused again.
  gateway.signal('SIGHUP');
  await gateway.waitForLog((l) => l.msg === FAILED, { count: logged + 2, what: 'the reload on SIGHUP' });
  expect(await failures()).toBe(before + 2);
  expect(await peerFingerprint(port(), { ca: ca() })).toBe(second.fingerprint);
});
