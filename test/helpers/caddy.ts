import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { ProxyProcess } from './proxy-process.js';

export const CADDY_BIN = process.env.CADDY_BIN ?? '/usr/bin/caddy';

/**
 * A private Caddy (`caddy run`) from a Caddyfile of the test's whose site is `:80 {`: the site is
 * moved to a free port on 127.0.0.1, and global options put in front (no admin endpoint,
 * no automatic HTTPS, storage and HOME/XDG dirs in a temp dir of its own).
 */
export class CaddyProcess extends ProxyProcess {
  private constructor(
    port: number,
    dir: string,
    child: ChildProcess,
    private readonly stderr: () => string,
  ) {
    super(port, dir, child);
  }

  static async start(caddyfile: string): Promise<CaddyProcess> {
    if (!/^:80 \{$/m.test(caddyfile)) throw new Error('the Caddyfile must have a ":80 {" site');
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-test-caddy-'));
    for (const sub of ['home', 'data', 'config']) mkdirSync(join(dir, sub));
    const port = await freePort();
    const text = [
      '{',
      '\tadmin off',
      '\tauto_https off',
      `\tstorage file_system ${join(dir, 'data')}`,
      '}',
      // Any host (the tests name theirs), on loopback only.
      caddyfile.replace(/^:80 \{$/m, `http://:${port} {\n\tbind 127.0.0.1`),
    ].join('\n');
    const file = join(dir, 'Caddyfile');
    writeFileSync(file, text);
    const child = spawn(CADDY_BIN, ['run', '--config', file, '--adapter', 'caddyfile'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: join(dir, 'home'),
        XDG_DATA_HOME: join(dir, 'data'),
        XDG_CONFIG_HOME: join(dir, 'config'),
      },
    });
    // Caddy logs to stderr: keep the tail for a failure message (and keep the pipe drained).
    let log = '';
    child.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-20_000)));
    return ProxyProcess.listening(new CaddyProcess(port, dir, child, () => log));
  }

  log(): string {
    return this.stderr();
  }
}
