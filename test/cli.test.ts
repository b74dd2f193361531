// The tollgate command as a user runs it: real processes, real exit codes.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { send } from './helpers/gateway.js';
import { TestUpstream } from './helpers/upstream.js';

const CLI = ['--import', 'tsx', 'src/cli.ts'];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, [...CLI, ...args], {
    env: { ...process.env, DATA_DIR: dir, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tollgate-cli-'));
});

describe('tollgate check', () => {
  test('prints the compiled rule table of a valid config', async () => {
    const r = await run(['check', '--config', 'config/gateway.yaml']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('config/gateway.yaml: ok');
    expect(r.stdout).toContain(
      'widget-init: 1000/1m by ip+user_agent, 30000/1h by ip (on store error: open)',
    );
    expect(r.stdout).toContain(
      '2. widget-init: POST /api/v1/widget/init on * -> widget\n' +
        '     limiters: widget-init\n' +
        '     cors: widget (origins *; methods GET, POST, DELETE, OPTIONS)\n',
    );
  });

  test('an invalid config exits non-zero naming file, line and column', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(
      file,
      'listeners: [{ port: 0 }]\nupstreams:\n  app: { url: "http://127.0.0.1:9" }\nroutes:\n  - { name: r, paths: ["/*"], upstream: ghost }\n',
    );
    const r = await run(['check', '--config', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`invalid config:\n${file}:5:41: routes[0].upstream: unknown upstream "ghost"\n`);
  });

  test('a missing file exits non-zero', async () => {
    const r = await run(['check', '--config', join(dir, 'absent.yaml')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('absent.yaml: (root): cannot read');
  });

  test('an unknown command exits 2 with usage', async () => {
    const r = await run(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown command "frobnicate"');
  });
});

describe('tollgate explain', () => {
  test('names the route, the limiters and each key part', async () => {
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
    expect(lines.slice(0, 5)).toEqual([
      'route: widget-init -> upstream widget',
      'forwarded as: /api/v1/widget/init',
      'client ip: 127.0.0.1',
      'limiter widget-init:',
      '  1000 per 1 minute, key parts:',
    ]);
    expect(lines[5]).toMatch(/^ {4}ip = ip=127\.0\.0\.1 -> \S{22}$/);
    expect(lines[6]).toMatch(/^ {4}user_agent = ua=curl\/8 -> \S{22}$/);
    expect(r.stdout).toContain('30000 per 1 hour, key parts:');
  });

  test('a JWT-keyed route shows the fallback when the token is missing', async () => {
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

  test('an unlimited route says so', async () => {
    const r = await run([
      'explain',
      '--config',
      'config/gateway.yaml',
      'GET',
      'http://analyzer.localhost/api/v1/reports',
    ]);
    expect(r.stdout.trim()).toBe(
      'route: reports -> upstream reports\nforwarded as: /api/v1/reports\nlimiters: (none: not rate limited)',
    );
  });
});

describe('tollgate start', () => {
  let upstream: TestUpstream;
  beforeAll(async () => {
    upstream = await TestUpstream.start();
  });
  afterAll(async () => upstream?.close());

  test('serves with the memory store and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, [...CLI, 'start', '--config', 'config/gateway.yaml'], {
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        ADMIN_PORT: '0',
        WIDGET_UPSTREAM: upstream.url,
        DATA_DIR: dir,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let logs = '';
    child.stdout.on('data', (d: Buffer) => (logs += d.toString()));
    const deadline = Date.now() + 20_000;
    // The public listener's port is read from its log line (port 0: no race for a free port).
    const publicListening = () =>
      logs
        .split('\n')
        .filter((l) => l.includes('"msg":"listening"') && l.includes('"listener":"public"'))
        .map((l) => JSON.parse(l) as { port: number })[0];
    while (!publicListening()) {
      if (Date.now() > deadline || child.exitCode !== null)
        throw new Error(`tollgate start did not listen:\n${logs}`);
      await new Promise((r) => setTimeout(r, 50));
    }

    const { port } = publicListening()!;
    const reply = await send(`http://127.0.0.1:${port}/api/v1/widget/typing`, {
      method: 'POST',
      headers: { 'user-agent': 'secret-agent' },
    });
    expect(reply.status).toBe(200);
    expect(reply.headers['x-ratelimit-remaining']).toBe('599');
    child.kill('SIGTERM');
    const [code] = (await once(child, 'close')) as [number];
    expect(code).toBe(0);

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
