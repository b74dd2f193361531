// nginx with tollgate as its decision service (auth_request), as docs/examples/nginx.conf sets it
// up: the shipped example, pointed at a tollgate decision listener (bench/forward-auth.yaml) and the
// bench upstream. Both run under this process, so the bench pins and measures them together.
// PORT: nginx's; ADMIN_PORT: tollgate's admin listener (its decisions); NGINX_WORKERS (1).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, ROOT } from '../lib/processes.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-nginx-auth-'));
const decisionPort = await freePort();
const upstream = new URL(process.env.UPSTREAM_URL);

const tollgate = spawn(
  process.execPath,
  [join(ROOT, 'dist/cli.js'), 'start', '--config', join(ROOT, 'bench/forward-auth.yaml')],
  { env: { ...process.env, DECISION_PORT: String(decisionPort) }, stdio: 'inherit' },
);
tollgate.on('exit', (code) => process.exit(code ?? 1));

/** nginx must not ask before tollgate listens: the probe would get a 500. */
async function untilAccepting(port) {
  for (let i = 0; i < 300; i++) {
    const ok = await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`tollgate did not listen on ${port}`);
}
await untilAccepting(decisionPort);

const example = readFileSync(join(ROOT, 'docs/examples/nginx.conf'), 'utf8');
const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
  .map((kind) => `  ${kind}_temp_path ${join(dir, kind)};`)
  .join('\n');
const conf = join(dir, 'nginx.conf');
writeFileSync(
  conf,
  [
    'daemon off;',
    `worker_processes ${Number(process.env.NGINX_WORKERS ?? 1)};`,
    ...(process.getuid?.() === 0 ? ['user root;'] : []),
    `pid ${join(dir, 'nginx.pid')};`,
    `error_log ${join(dir, 'error.log')} warn;`,
    example
      .replace('listen 80;', `listen 127.0.0.1:${process.env.PORT};`)
      .replaceAll('127.0.0.1:8081', `127.0.0.1:${decisionPort}`)
      .replaceAll('127.0.0.1:3000', upstream.host)
      .replace('events {}', 'events { worker_connections 4096; }')
      .replace(/^http \{$/m, `http {\n  access_log off;\n${temp}`),
  ].join('\n'),
);
const nginx = spawn(process.env.NGINX_BIN ?? 'nginx', ['-c', conf, '-p', dir], { stdio: 'inherit' });
nginx.on('exit', (code) => process.exit(code ?? 1));

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    let left = 2;
    const done = () => --left === 0 && process.exit(0);
    nginx.removeAllListeners('exit').once('exit', done);
    tollgate.removeAllListeners('exit').once('exit', done);
    nginx.kill('SIGQUIT'); // graceful stop
    tollgate.kill('SIGTERM');
  });
}
process.once('exit', () => {
  nginx.kill('SIGKILL');
  tollgate.kill('SIGKILL');
});
