// Certificate reload in `tollgate start` with `workers: 2`: the primary watches the files (and takes
// SIGHUP) and tells each worker; every worker's new connections then present the new certificate,
// and a bad file keeps the running one on every worker.
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { describe, expect } from 'vitest';
import { selfSigned, type CertificateFiles } from '../../helpers/certificates.js';
import { startGatewayProcess, type CliProcess, type LogLine } from '../../helpers/cli.js';
import { replaceFile } from '../../helpers/files.js';
import { test as serversTest } from '../../helpers/fixtures.js';
import { REDIS_STORE } from '../../helpers/gateway.js';

const RELOADED = 'certificates reloaded';
const FAILED = 'certificate reload failed: keeping the running certificate';
const REQUESTS = 12; // new connections, spread round-robin by node:cluster: both workers get some

interface Files {
  readonly dir: string;
  readonly live: { readonly cert: string; readonly key: string };
  readonly sets: readonly CertificateFiles[];
  /** Trusts every certificate of `sets`. */
  readonly ca: Buffer;
}

/** Puts a certificate set in place as the live files (key first, as a renewal script would). */
async function install(files: Files, set: CertificateFiles): Promise<void> {
  await replaceFile(files.live.key, await readFile(set.key, 'utf8'));
  await replaceFile(files.live.cert, await readFile(set.cert, 'utf8'));
}

/** `tollgate start` with two workers and one TLS listener on the live files. */
async function startWorkers(files: Files, watch: boolean, env: Record<string, string>): Promise<CliProcess> {
  const config = join(files.dir, `gateway-${watch ? 'watch' : 'sighup'}.yaml`);
  await writeFile(
    config,
    `workers: 2
listeners:
  - { name: tls, host: 127.0.0.1, port: 0, tls: { cert: '${files.live.cert}', key: '${files.live.key}' } }
admin: { host: 127.0.0.1, port: 0 }
reload: { watch: ${watch} }
${REDIS_STORE}
upstreams: { app: { url: '\${UPSTREAM_URL}' } }
routes: [{ name: all, paths: ['/*'], upstream: app }]
`,
  );
  return startGatewayProcess(config, { env, listeners: 2, admin: true });
}

interface Answer {
  readonly fingerprint: string;
  /** The worker that served it (its access-log line's pid). */
  readonly pid: unknown;
}

/** One request on each of `REQUESTS` new TLS connections: the certificate each was shown, and by which worker. */
async function answers(gp: CliProcess, ca: Buffer): Promise<Answer[]> {
  const seen: { fingerprint: string; reqId: string }[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const req = request(`${gp.url}/who`, { ca, agent: false, headers: { connection: 'close' } });
    req.end();
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    res.resume();
    await once(res, 'end');
    expect(res.statusCode).toBe(200);
    seen.push({
      fingerprint: (res.socket as TLSSocket).getPeerCertificate().fingerprint256,
      reqId: String(res.headers['x-request-id']),
    });
  }
  const ids = new Set(seen.map((s) => s.reqId));
  const lines = await gp.waitForLog((l) => ids.has(String(l['reqId'])), {
    count: REQUESTS,
    what: 'the access-log lines of the requests',
  });
  const pidOf = new Map(lines.map((l) => [String(l['reqId']), l['pid']]));
  return seen.map((s) => ({ fingerprint: s.fingerprint, pid: pidOf.get(s.reqId) }));
}

/** Every new connection, on both workers, presents `expected`. */
async function expectEveryWorkerPresents(gp: CliProcess, ca: Buffer, expected: string): Promise<void> {
  const got = await answers(gp, ca);
  expect(new Set(got.map((a) => a.pid)).size).toBe(2);
  expect(new Set(got.map((a) => a.fingerprint))).toEqual(new Set([expected]));
}

/** Waits for `count` more lines matching, and returns those new ones. */
async function nextLines(gp: CliProcess, match: (l: LogLine) => boolean, count: number, what: string) {
  const before = gp.logs().filter(match).length;
  return async () => (await gp.waitForLog(match, { count: before + count, what })).slice(before);
}

const workerPids = (gp: CliProcess) =>
  new Set(
    gp
      .logs()
      .filter((l) => l.msg === 'listening' && l['listener'] === 'tls')
      .map((l) => l['pid']),
  );

const test = serversTest.extend('files', { scope: 'file' }, async ({}, { onCleanup }): Promise<Files> => {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-tls-workers-'));
  onCleanup(() => rm(dir, { recursive: true, force: true }));
  const sets = ['first', 'second', 'third'].map((name) => selfSigned(dir, name));
  return {
    dir,
    live: { cert: join(dir, 'live.pem'), key: join(dir, 'live.key') },
    sets,
    ca: Buffer.concat(sets.map((s) => s.pem)),
  };
});

describe('two workers, the certificate files watched', () => {
  test('a replaced certificate reaches both workers; a bad file keeps the old one on each, logged with its name', async ({
    files,
    gatewayEnv,
  }) => {
    const [first, second] = files.sets as [CertificateFiles, CertificateFiles];
    await install(files, first);
    const gp = await startWorkers(files, true, gatewayEnv);
    try {
      const pids = workerPids(gp);
      expect(pids.size).toBe(2);
      await expectEveryWorkerPresents(gp, files.ca, first.fingerprint);

      const reloaded = await nextLines(
        gp,
        (l) => l.msg === RELOADED && l['fingerprint'] === second.fingerprint,
        2,
        'both workers reloading',
      );
      await install(files, second);
      const lines = await reloaded();
      expect(new Set(lines.map((l) => l['pid']))).toEqual(pids);
      await expectEveryWorkerPresents(gp, files.ca, second.fingerprint);

      const failed = await nextLines(gp, (l) => l.msg === FAILED, 2, 'both workers refusing the bad file');
      await replaceFile(files.live.cert, 'not a certificate\n');
      const failures = await failed();
      expect(new Set(failures.map((l) => l['pid']))).toEqual(pids);
      for (const line of failures)
        expect(line).toMatchObject({ level: 50, listener: 'tls', file: files.live.cert });
      await expectEveryWorkerPresents(gp, files.ca, second.fingerprint);
      expect(gp.stderr).toBe('');
    } finally {
      expect(await gp.stop()).toBe(0);
    }
  }, 60_000);
});

describe('two workers, reload.watch false', () => {
  test('SIGHUP to the primary reloads the certificate on both workers; a bad file keeps the old one on each', async ({
    files,
    gatewayEnv,
  }) => {
    const [, second, third] = files.sets as [CertificateFiles, CertificateFiles, CertificateFiles];
    await install(files, second);
    const gp = await startWorkers(files, false, gatewayEnv);
    try {
      const pids = workerPids(gp);
      await install(files, third);
      // Not watched: until SIGHUP, the old certificate stays (both workers answer to prove it).
      await expectEveryWorkerPresents(gp, files.ca, second.fingerprint);

      const reloaded = await nextLines(
        gp,
        (l) => l.msg === RELOADED && l['fingerprint'] === third.fingerprint,
        2,
        'both workers reloading on SIGHUP',
      );
      gp.signal('SIGHUP');
      expect(new Set((await reloaded()).map((l) => l['pid']))).toEqual(pids);
      await expectEveryWorkerPresents(gp, files.ca, third.fingerprint);

      await replaceFile(files.live.key, 'not a key\n');
      const failed = await nextLines(gp, (l) => l.msg === FAILED, 2, 'both workers refusing the bad key');
      gp.signal('SIGHUP');
      const failures = await failed();
      expect(new Set(failures.map((l) => l['pid']))).toEqual(pids);
      for (const line of failures)
        expect(line).toMatchObject({ level: 50, listener: 'tls', file: files.live.key });
      await expectEveryWorkerPresents(gp, files.ca, third.fingerprint);
      expect(gp.stderr).toBe('');
    } finally {
      expect(await gp.stop()).toBe(0);
    }
  }, 60_000);
});
