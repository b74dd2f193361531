// `tollgate check` loads the certificate files of the TLS listeners, and `tollgate start` refuses a
// bad one at once, with the same error (with `workers: 2`, before any worker is forked).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { selfSigned } from '../helpers/certificates.js';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-check-tls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const good = selfSigned(dir, 'good');
const other = selfSigned(dir, 'other');
const garbage = join(dir, 'garbage.pem');
writeFileSync(garbage, 'not a PEM file\n');
const missing = join(dir, 'missing.pem');

interface Tls {
  cert: string;
  key: string;
  ca?: string;
}

/** A config with a plain listener, then a TLS one on `tls` (so the TLS listener is listeners[1]). */
function configFile(name: string, tls: Tls, extra = ''): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `${extra}listeners:
  - { name: plain, host: 127.0.0.1, port: 0 }
  - { name: tls, host: 127.0.0.1, port: 0, tls: ${JSON.stringify(tls)} }
upstreams: { app: { url: 'http://127.0.0.1:9' } }
routes: [{ name: all, paths: ['/*'], upstream: app }]
`,
  );
  return file;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** stderr of a refused config: the field, then the certificate file and why (OpenSSL's words in brackets). */
const refusal = (file: string, field: string, reason: string) =>
  new RegExp(`^invalid config:\n${escape(`${file}: listeners[1].${field}: ${reason}`)}( \\(.+\\))?\n$`);

test('good certificate, key and CA: check says ok', async () => {
  const file = configFile('good', { cert: good.cert, key: good.key, ca: other.cert });
  const run = await runCli(['check', '--config', file]);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(run.stdout.startsWith(`${file}: ok\n`)).toBe(true);
});

test.each([
  [
    'a certificate that is no PEM',
    { cert: garbage, key: good.key },
    'tls.cert',
    `${garbage}: not a PEM certificate`,
  ],
  ['a key that is no PEM', { cert: good.cert, key: garbage }, 'tls.key', `${garbage}: not a PEM private key`],
  [
    'a CA that is no PEM',
    { cert: good.cert, key: good.key, ca: garbage },
    'tls.ca',
    `${garbage}: not a PEM CA certificate`,
  ],
  [
    'a missing key file',
    { cert: good.cert, key: missing },
    'tls.key',
    `${missing}: ENOENT: no such file or directory, open '${missing}'`,
  ],
])('%s: check fails naming the field and the file, exit code 1', async (name, tls, field, reason) => {
  const file = configFile(name.replaceAll(' ', '-'), tls);
  const run = await runCli(['check', '--config', file]);
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(refusal(file, field, reason));
});

test('a key of another certificate: check fails naming both files', async () => {
  const file = configFile('mismatch', { cert: good.cert, key: other.key });
  const run = await runCli(['check', '--config', file]);
  expect(run.code).toBe(1);
  expect(run.stderr).toBe(
    `invalid config:\n${file}: listeners[1].tls: ${good.cert} + ${other.key}: error:05800074:x509 certificate routines::key values mismatch\n`,
  );
});

test('start refuses a bad certificate with the same error, before forking workers', async () => {
  const file = configFile(
    'start-workers',
    { cert: garbage, key: good.key },
    // Never contacted: the certificates are checked before the store.
    "workers: 2\nstore: { redis: { url: 'redis://127.0.0.1:1' } }\n",
  );
  const run = await runCli(['start', '--config', file]);
  expect(run.code).toBe(1);
  expect(run.stdout).toBe(''); // no log line: no worker was started
  expect(run.stderr).toMatch(refusal(file, 'tls.cert', `${garbage}: not a PEM certificate`));
});
