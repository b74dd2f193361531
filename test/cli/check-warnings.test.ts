// `tollgate check` on a config with mistakes that validation cannot refuse: it still exits 0, and
// ends its output with one warning per mistake.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { test as base } from '../helpers/fixtures.js';

const test = base.extend('dir', { scope: 'file' }, async ({}, { onCleanup }) => {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-check-'));
  onCleanup(() => rm(dir, { recursive: true, force: true }));
  return dir;
});

const CONFIG = `listeners:
  - { port: 0 }
  - { name: auth, host: 127.0.0.1, port: 0, mode: decision, onLimited: 403 }
upstreams:
  app: { url: "http://127.0.0.1:9" }
limiters:
  l:
    windows:
      - { limit: 100, period: 1m, key: [ip] }
      - { limit: 50, period: 1h, key: [ip] }
  old-api: { windows: [{ limit: 5, period: 1m, key: [ip] }] }
routes:
  - { name: api, paths: ['/api/*'], upstream: app, limiters: [l] }
  - { name: v1, methods: [GET], paths: ['/api/v1/*'], upstream: app }
`;

test('warns about an unused limiter, an unreachable route and contradicting windows, and exits 0', async ({
  dir,
}) => {
  const file = join(dir, 'warned.yaml');
  await writeFile(file, CONFIG);
  const r = await runCli(['check', '--config', file], { env: { DATA_DIR: dir } });
  expect(r.code).toBe(0);
  expect(r.stdout.startsWith(`${file}: ok\n\nlisteners:\n`)).toBe(true);
  expect(r.stdout).toContain(
    '  auth: 127.0.0.1:0, mode decision, onLimited 403, TLS off, HTTP/2 off (needs TLS), mTLS off\n',
  );
  expect(r.stdout.slice(r.stdout.indexOf('\n\nwarnings:'))).toBe(
    [
      '',
      '',
      'warnings:',
      '  - limiter "old-api" is unused: no route names it',
      '  - route "v1" is unreachable: route "api" before it matches all its requests',
      '  - windows contradict: l.0 (100/1m by ip) can never refuse, l.1 (50/1h by ip) is spent first',
      '',
    ].join('\n'),
  );
});
