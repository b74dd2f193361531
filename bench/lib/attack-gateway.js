// The gateway under attack and what the attack bench reads of it: its config (the checkout's own
// config/gateway.yaml plus a TLS listener for HTTP/2), its RSS, its data folder on disk and its
// TCP connections to the embedded services (the upstreams), found with `ss`.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseDocument } from 'yaml';
import { freePort, httpRequest, startNode, waitForHttp } from './processes.js';

export const WORKSPACE = 'acme';
export const API_KEY = 'bench-attack-api-key-0123456789';

/** A self-signed certificate for 127.0.0.1 (openssl), written once per bench run. */
export function certificate() {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-attack-tls-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  execFileSync(
    'openssl',
    [...args, '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'].concat([
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ]),
    { stdio: 'pipe' },
  );
  return { cert, key, pem: readFileSync(cert) };
}

/**
 * The checkout's shipped config with one more listener: TLS with HTTP/2 (and HTTP/1.1 by ALPN) on
 * TLS_PORT. Edited as a YAML document, so every ${VAR} of the shipped file stays as it was.
 */
function benchConfig(root, dir, tls) {
  const doc = parseDocument(readFileSync(join(root, 'config', 'gateway.yaml'), 'utf8'));
  doc.addIn(['listeners'], {
    name: 'bench-tls',
    host: '127.0.0.1',
    port: '${TLS_PORT}',
    tls: { cert: tls.cert, key: tls.key },
    http2: { maxConcurrentStreams: 100 },
  });
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, doc.toString());
  return file;
}

/** Starts the checkout's built gateway on fresh ports and a fresh data folder; resolves when it answers. */
export async function startGateway(root, name, { redisPort, tls }) {
  const [port, tlsPort] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-attack-'));
  const configDir = join(dataDir, '..', `${dataDir.split('/').pop()}-config`);
  mkdirSync(configDir, { recursive: true });
  const proc = startNode(name, join(root, 'dist', 'cli.js'), {
    args: ['start', '--config', benchConfig(root, configDir, tls)],
    env: {
      HOST: '127.0.0.1',
      PORT: String(port),
      TLS_PORT: String(tlsPort),
      ADMIN_PORT: '0',
      DATA_DIR: dataDir,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      TRUSTED_PROXIES: '127.0.0.1',
      BOOTSTRAP_WORKSPACE_TOKEN: 'bench|bench-secret-0123456789',
      BOOTSTRAP_WORKSPACE: WORKSPACE,
      BOOTSTRAP_API_KEYS: API_KEY,
      LOG_LEVEL: 'error',
      CONFIG_WATCH: 'false',
    },
  });
  try {
    await waitForHttp(proc, port, 30_000);
  } catch (err) {
    proc.child.kill('SIGKILL');
    throw err;
  }
  return { proc, pid: proc.child.pid, port, tlsPort, dataDir, upstreams: {} };
}

/** Runs a command with a deadline; resolves with its stdout, or '' when it fails. */
function run(command, args, timeoutMs = 5000) {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout) =>
      resolve(err ? '' : stdout),
    );
  });
}

/** The ports the gateway process listens on (ss -p shows our own processes). */
async function listeningPorts(pid) {
  const out = await run('ss', ['-Htlnp']);
  const ports = [];
  for (const line of out.split('\n')) {
    if (!line.includes(`pid=${pid},`)) continue;
    const local = line.trim().split(/\s+/)[3] ?? '';
    const port = Number(local.slice(local.lastIndexOf(':') + 1));
    if (port) ports.push(port);
  }
  return ports;
}

/**
 * Finds the embedded services' loopback ports (they start on first use: call after some traffic).
 * The websites service serves /js/script.js, the widget answers init; the others are "other".
 */
export async function discoverUpstreams(gw) {
  const found = {};
  for (const port of await listeningPorts(gw.pid)) {
    if (port === gw.port || port === gw.tlsPort) continue;
    const script = await httpRequest(port, { path: '/js/script.js', timeoutMs: 3000 }).catch(() => undefined);
    if (script?.status === 200 && /javascript/.test(script.headers['content-type'] ?? '')) {
      found.websites = port;
      continue;
    }
    const init = await httpRequest(port, {
      method: 'POST',
      path: '/api/v1/widget/init',
      headers: { 'content-type': 'application/json' },
      body: '{}',
      timeoutMs: 3000,
    }).catch(() => undefined);
    if (init?.status === 422) found.widget = port;
  }
  gw.upstreams = found;
  return found;
}

/** Lines of `ss -Htan <filter>` (no header), counted. */
async function countSockets(args) {
  const out = await run('ss', ['-Htan', ...args]);
  return out.split('\n').filter(Boolean).length;
}

/**
 * TCP connections to each embedded upstream: open ones (the gateway's end), and closed ones still
 * in TIME-WAIT (closed within the last 60 s: on a fresh gateway, about every connection it opened
 * and closed since the phase before).
 */
async function upstreamConnections(gw) {
  const result = {};
  for (const [name, port] of Object.entries(gw.upstreams)) {
    const open = await countSockets(['state', 'established', `( dport = :${port} )`]);
    const timeWait = await countSockets(['state', 'time-wait', `( dport = :${port} or sport = :${port} )`]);
    result[name] = { open, timeWait };
  }
  return result;
}

/** The gateway's resident set, in bytes (undefined once it has exited). */
function rss(pid) {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

/** Bytes in the data folder: every file, and the SQLite write-ahead logs apart. */
function disk(dir) {
  let total = 0;
  let wal = 0;
  for (const name of readdirSync(dir)) {
    try {
      const stats = statSync(join(dir, name));
      if (!stats.isFile()) continue;
      total += stats.size;
      if (name.endsWith('-wal')) wal += stats.size;
    } catch {
      // removed meanwhile
    }
  }
  return { total, wal };
}

/** What the gateway holds now: RSS, disk, upstream connections. */
export async function snapshot(gw) {
  return { rss: rss(gw.pid), disk: disk(gw.dataDir), upstream: await upstreamConnections(gw) };
}

/**
 * SIGTERM, then SIGKILL if it has not exited after `graceMs` (the shipped drain deadline is 10 s).
 * Resolves with how it ended and how long it took.
 */
export async function stopGateway(gw, graceMs = 15_000) {
  const started = performance.now();
  if (!gw.proc.alive) return { how: 'had exited', ms: 0 };
  gw.proc.child.kill('SIGTERM');
  const ended = await Promise.race([gw.proc.exited, sleep(graceMs, 'timeout')]);
  if (ended === 'timeout') {
    gw.proc.child.kill('SIGKILL');
    await Promise.race([gw.proc.exited, sleep(5000)]);
    return { how: `SIGKILL (SIGTERM ignored for ${graceMs / 1000} s)`, ms: performance.now() - started };
  }
  return { how: `SIGTERM (exit ${ended.code ?? ended.signal})`, ms: performance.now() - started };
}
