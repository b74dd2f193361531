// The tollgate command as a user runs it: real processes, real exit codes.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { runCli, startGatewayProcess, type CliResult } from '../helpers/cli.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { send } from '../helpers/gateway.js';

const test = serversTest
  /** The file's scratch directory: its configs, and the commands' DATA_DIR. */
  .extend('dir', { scope: 'file' }, () => mkdtemp(join(tmpdir(), 'tollgate-cli-')))
  .extend(
    'run',
    { scope: 'file' },
    ({ dir }) =>
      (args: string[], env: Record<string, string> = {}): Promise<CliResult> =>
        runCli(args, { env: { DATA_DIR: dir, ...env } }),
  );

describe('tollgate check', () => {
  test('prints the compiled rule table of a valid config', async ({ run }) => {
    const r = await run(['check', '--config', 'config/gateway.yaml']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('config/gateway.yaml: ok');
    expect(r.stdout).toContain(
      'widget-init: 1000/1m by ip+user_agent, 30000/1h by ip (on store error: open)',
    );
    // Numbered in config order: the number is whatever the shipped config gives it.
    expect(r.stdout).toMatch(
      /\n {2}\d+\. widget-init: POST \/api\/v1\/widget\/init on \* -> widget\n {5}limiters: widget-init, widget-sessions-ip\n {5}cors: widget \(origins \*; methods GET, POST, DELETE, OPTIONS\)\n/,
    );
  });

  test('an invalid config exits non-zero naming file, line and column', async ({ dir, run }) => {
    const file = join(dir, 'bad.yaml');
    await writeFile(
      file,
      'listeners: [{ port: 0 }]\nupstreams:\n  app: { url: "http://127.0.0.1:9" }\nroutes:\n  - { name: r, paths: ["/*"], upstream: ghost }\n',
    );
    const r = await run(['check', '--config', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`invalid config:\n${file}:5:41: routes[0].upstream: unknown upstream "ghost"\n`);
  });

  test('a missing file exits non-zero', async ({ dir, run }) => {
    const r = await run(['check', '--config', join(dir, 'absent.yaml')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('absent.yaml: (root): cannot read');
  });

  test('an unknown command exits 2 with usage', async ({ run }) => {
    const r = await run(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown command "frobnicate"');
  });
});

describe('tollgate explain', () => {
  test('names the route, the limiters and each key part', async ({ run }) => {
    const r = await run([
      'explain',
      '--config',
      'config/gateway.yaml',
      '--header',
      'User-Agent: curl/8',
      'POST',
      'http://localhost:8080/api/v1/widget/init',
    ]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines.slice(0, 7)).toEqual([
      'route: widget-init -> upstream widget',
      'forwarded as: /api/v1/widget/init',
      'may be refused: 429 rate_limited when a window below is spent (live state: the counts in the store)',
      'may be refused: 429 too_many_requests_in_flight when this address has 64 requests in progress (live state, per process)',
      'client ip: 127.0.0.1',
      'limiter widget-init:',
      '  1000 per 1 minute, key parts:',
    ]);
    expect(lines[7]).toMatch(/^ {4}ip = ip=127\.0\.0\.1 -> \S{22}$/);
    expect(lines[8]).toMatch(/^ {4}user_agent = ua=curl\/8 -> \S{22}$/);
    expect(r.stdout).toContain('30000 per 1 hour, key parts:');
  });

  test('a JWT-keyed route shows the fallback when the token is missing', async ({ run }) => {
    const r = await run(
      ['explain', '--config', 'config/gateway.yaml', '--peer', '203.0.113.4', 'POST', '/api/v1/widget/leads'],
      {
        WIDGET_JWT_SECRET: 'x'.repeat(32),
      },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('visitor jwt: missing (per-IP fallback key)');
    expect(r.stdout).toContain('jwt = jwt!ip=203.0.113.4');
  });

  test('an unlimited route says so', async ({ run }) => {
    const r = await run([
      'explain',
      '--config',
      'config/gateway.yaml',
      'GET',
      'http://analyzer.localhost/api/v1/reports',
    ]);
    expect(r.stdout.trim()).toBe(
      [
        'route: reports -> upstream reports',
        'hosts: analyzer.localhost',
        'forwarded as: /api/v1/reports',
        'may be refused: 429 too_many_requests_in_flight when this address has 64 requests in progress (live state, per process)',
        'limiters: (none: not rate limited)',
      ].join('\n'),
    );
  });
});

describe('tollgate start', () => {
  test('serves with the memory store and exits 0 on SIGTERM', async ({ dir, upstream, onTestFinished }) => {
    // The public listener's port is read from its log line (port 0: no race for a free port).
    const gp = await startGatewayProcess('config/gateway.yaml', {
      env: { PORT: '0', HOST: '127.0.0.1', ADMIN_PORT: '0', WIDGET_UPSTREAM: upstream.url, DATA_DIR: dir },
    });
    onTestFinished(async () => {
      await gp.stop();
    });
    const reply = await send(`${gp.url}/api/v1/widget/typing`, {
      method: 'POST',
      headers: { 'user-agent': 'secret-agent' },
    });
    expect(reply.status).toBe(200);
    expect(reply.headers['x-ratelimit-remaining']).toBe('599');
    gp.signal('SIGTERM');
    expect((await gp.exit).code).toBe(0);

    const logs = gp.stdout;
    const requestLog = logs.split('\n').find((l) => l.includes('"route":"widget-typing"'));
    expect(JSON.parse(requestLog!)).toMatchObject({
      method: 'POST',
      path: '/api/v1/widget/typing',
      status: 200,
      limit: 'allowed',
    });
    expect(logs).not.toContain('secret-agent'); // user agents never reach the logs
    expect(logs).toContain('"msg":"shutting down"');
  });
});
