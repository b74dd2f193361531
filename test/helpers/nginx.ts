import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { ProxyProcess } from './proxy-process.js';

export const NGINX_BIN = process.env.NGINX_BIN ?? '/usr/sbin/nginx';

/**
 * A private nginx in the foreground (daemon off) from a config of the test's, in a temp dir of its
 * own (pid, logs, temp files), listening on 127.0.0.1 at a free port. `config` is a whole
 * nginx.conf whose server listens on `listen 80;`: that line is moved to the free port, and the
 * process-level settings are put in front of it.
 */
export class NginxProcess extends ProxyProcess {
  static async start(config: string): Promise<NginxProcess> {
    if (!config.includes('listen 80;')) throw new Error('the nginx config must have "listen 80;"');
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-test-nginx-'));
    const port = await freePort();
    const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
      .map((kind) => `  ${kind}_temp_path ${join(dir, kind)};`)
      .join('\n');
    const text = [
      'daemon off;',
      'master_process on;',
      'worker_processes 1;',
      // Workers keep root's rights (the temp dir is root's); elsewhere nginx runs as the caller.
      ...(process.getuid?.() === 0 ? ['user root;'] : []),
      `pid ${join(dir, 'nginx.pid')};`,
      `error_log ${join(dir, 'error.log')} warn;`,
      config
        .replace('listen 80;', `listen 127.0.0.1:${port};`)
        .replace(/^http \{$/m, `http {\n  access_log off;\n${temp}`),
    ].join('\n');
    const conf = join(dir, 'nginx.conf');
    writeFileSync(conf, text);
    const child = spawn(NGINX_BIN, ['-p', dir, '-c', conf, '-e', join(dir, 'error.log')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    return ProxyProcess.listening(new NginxProcess(port, dir, child));
  }

  /** nginx's error log, for a failure message. */
  log(): string {
    try {
      return readFileSync(join(this.dir, 'error.log'), 'utf8');
    } catch {
      return '';
    }
  }
}
