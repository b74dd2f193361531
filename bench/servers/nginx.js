// nginx proxy_pass to the bench upstream, as a peer: the Debian nginx binary run in the foreground
// with a generated config (keep-alive to the upstream, access log off, NGINX_WORKERS worker
// processes, default 1: the bench gives the server under test one CPU).
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-nginx-'));
const conf = join(dir, 'nginx.conf');
const upstream = new URL(process.env.UPSTREAM_URL);
writeFileSync(
  conf,
  `daemon off;
worker_processes ${Number(process.env.NGINX_WORKERS ?? 1)};
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir};
  proxy_temp_path ${dir};
  upstream app { server ${upstream.host}; keepalive 128; }
  server {
    listen 127.0.0.1:${process.env.PORT};
    location / {
      proxy_pass http://app;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    }
  }
}
`,
);
const nginx = spawn(process.env.NGINX_BIN ?? 'nginx', ['-c', conf, '-p', dir], { stdio: 'inherit' });
nginx.on('exit', (code) => process.exit(code ?? 1));
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    nginx.once('exit', () => process.exit(0));
    nginx.kill('SIGQUIT'); // graceful stop
  });
}
process.once('exit', () => nginx.kill('SIGKILL'));
