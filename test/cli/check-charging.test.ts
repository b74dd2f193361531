// `tollgate check` and `tollgate explain` show calendar windows and a limiter's pricing.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';

const file = join(mkdtempSync(join(tmpdir(), 'tollgate-charging-')), 'gateway.yaml');
writeFileSync(
  file,
  `
listeners: [{ host: 127.0.0.1, port: 0 }]
identity: { trustedProxies: [127.0.0.1] }
upstreams: { app: { url: "http://127.0.0.1:9" } }
limiters:
  llm:
    chargeAfter: { header: X-Cost, max: 500 }
    windows: [{ limit: 10000, period: 1mo, align: calendar, key: [ip] }]
  logins: { countOnly: [401], windows: [{ limit: 5, period: 1w, align: calendar, weekStart: sunday, timeZone: Europe/Berlin, key: [ip] }] }
  uploads: { cost: { from: content-length, per: 1KB }, windows: [{ limit: 100, period: 1h, key: [ip] }] }
routes:
  - { name: llm, paths: ["/llm"], upstream: app, limiters: [llm] }
  - { name: login, paths: ["/login"], upstream: app, limiters: [logins] }
  - { name: up, paths: ["/up"], upstream: app, limiters: [uploads, { name: five, cost: 5, windows: [{ limit: 50, period: 1d, align: calendar, key: [ip] }] }] }
`,
);

test('check lists calendar periods and pricing', async () => {
  const run = await runCli(['check', '--config', file]);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain(
    '  llm: 10000/calendar month (UTC) by ip (on store error: open)\n' +
      '    message: Too Many Attempts.\n' +
      '    charging: charged after the response: x-cost header (max 500); checked before forwarding, counted after the response\n',
  );
  expect(run.stdout).toContain(
    '  logins: 5/calendar week from sunday (Europe/Berlin) by ip (on store error: open)\n' +
      '    message: Too Many Attempts.\n' +
      '    charging: cost 1; counted only for statuses 401; checked before forwarding, counted after the response\n',
  );
  expect(run.stdout).toContain('    charging: cost content-length ÷ 1024B, rounded up\n');
  expect(run.stdout).toContain('  five: 50/calendar day (UTC) by ip (on store error: open)\n');
  expect(run.stdout).toContain('    charging: cost 5\n');
});

test("explain shows a calendar window's period and its key, and the pricing", async () => {
  const run = await runCli(['explain', '--config', file, 'GET', 'http://localhost/up']);
  expect(run.code, run.stderr).toBe(0);
  const day = new Date();
  const start = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate());
  // Unless it ran across midnight: then the next day.
  const lines = run.stdout.split('\n');
  expect(lines).toContain('  charging: cost 5');
  expect(lines).toContain('  50 per calendar day (UTC), key parts:');
  const period = lines.find((l) => l.startsWith('    period: '))!;
  const key = lines.filter((l) => l.startsWith('    store key: '))[1]!;
  const [from, to] = [new Date(start).toISOString(), new Date(start + 86_400_000).toISOString()];
  const next = new Date(start + 86_400_000 * 2).toISOString();
  expect([`    period: ${from} to ${to}`, `    period: ${to} to ${next}`]).toContain(period);
  expect(key).toMatch(new RegExp(`:five:86400000\\.calendar:ip@(${start}|${start + 86_400_000})$`));
});
