// `tollgate replay` as an operator runs it: a candidate and a baseline config over a log mixing
// tollgate's, the combined and Caddy's lines, with a bad line and a line that is no request.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { hashPart } from '../../src/identity/hash.js';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-replay-'));
const config = (ordersLimit: number) => `
listeners: [{ host: 127.0.0.1, port: 0 }]
upstreams: { app: { url: "http://127.0.0.1:9" } }
limiters:
  api: { windows: [{ limit: 100, period: 1m, key: [ip] }] }
  orders: { windows: [{ limit: ${ordersLimit}, period: 1m, key: [ip] }] }
routes:
  - { name: orders, methods: [POST], paths: [/api/orders], upstream: app, limiters: [api, orders] }
  - { name: api, paths: [/api/*], upstream: app, limiters: [api] }
`;
const candidate = join(dir, 'candidate.yaml');
const baseline = join(dir, 'current.yaml');
writeFileSync(candidate, config(2));
writeFileSync(baseline, config(3));

const SHOP = '198.51.100.7';
const tollgate = (second: number, method: string, path: string) =>
  JSON.stringify({
    level: 30,
    time: `2026-11-16T10:00:0${second}.000Z`,
    reqId: `r${second}`,
    method,
    path,
    client: SHOP,
    status: 200,
    limit: 'allowed',
    host: 'api.example.com',
    keys: { ip: hashPart(`ip=${SHOP}`), user_agent: hashPart('ua=shop/1') },
  });
const log = join(dir, 'access.log');
writeFileSync(
  log,
  [
    '{"level":30,"time":"2026-11-16T10:00:00.000Z","msg":"listening"}',
    tollgate(1, 'POST', '/api/orders'),
    tollgate(2, 'POST', '/api/orders'),
    tollgate(3, 'POST', '/api/orders'),
    tollgate(4, 'POST', '/api/orders'),
    'not a log line',
    `${SHOP} - - [16/Nov/2026:10:00:05 +0000] "POST /api/orders HTTP/1.1" 200 12 "-" "shop/1"`,
    JSON.stringify({
      level: 'info',
      ts: Date.parse('2026-11-16T10:00:06Z') / 1000,
      logger: 'http.log.access',
      request: { client_ip: '203.0.113.5', method: 'GET', host: 'api.example.com', uri: '/api/items/1' },
      status: 200,
    }),
    tollgate(7, 'GET', '/nowhere'),
  ].join('\n') + '\n',
);

const shop = `ip=${hashPart(`ip=${SHOP}`)}`;
const other = `ip=${hashPart('ip=203.0.113.5')}`;
const none = { '0-50': 0, '50-80': 0, '80-100': 0, refused: 0 };
/** No list, ban, tier or charging on these routes: those counts stay 0. */
const noPolicy = { banned: 0, denied: 0, lengthRequired: 0, tiers: {} };
const noListOrBan = { exempt: 0, denied: 0, banned: 0, bansStarted: 0 };

/** One config's result: `ordersPassed` of the shop's 5 orders pass the orders limiter. */
const result = (ordersLimit: number) => ({
  unrouted: 1,
  missingKeyParts: {},
  warnings: [],
  routes: [
    {
      name: 'orders',
      limiters: ['api', 'orders'],
      requests: 5,
      refused: 5 - ordersLimit,
      shadowRefused: 0,
      ...noPolicy,
    },
    { name: 'api', limiters: ['api'], requests: 1, refused: 0, shadowRefused: 0, ...noPolicy },
  ],
  limiters: [
    {
      name: 'api',
      shadow: false,
      windows: '100/1m by ip',
      requests: 6,
      refused: 0,
      keys: 2,
      keysRefused: 0,
      ...noListOrBan,
      peakUse: { ...none, '0-50': 2 },
      // A request the orders limiter refuses is counted in no window, the api limiter's neither.
      topKeys: [
        { key: shop, requests: 5, refused: 0, peakPercent: ordersLimit },
        { key: other, requests: 1, refused: 0, peakPercent: 1 },
      ],
    },
    {
      name: 'orders',
      shadow: false,
      windows: `${ordersLimit}/1m by ip`,
      requests: 5,
      refused: 5 - ordersLimit,
      keys: 1,
      keysRefused: 1,
      ...noListOrBan,
      peakUse: { ...none, refused: 1 },
      topKeys: [{ key: shop, requests: 5, refused: 5 - ordersLimit, peakPercent: 100 }],
    },
  ],
});

test('--json: the input read, both configs per route and limiter, and the difference', async () => {
  const run = await runCli(['replay', '--config', candidate, '--baseline', baseline, '--json', log]);
  expect(run.code, run.stderr).toBe(0);
  expect(JSON.parse(run.stdout)).toEqual({
    config: candidate,
    baselineConfig: baseline,
    input: {
      files: [log],
      lines: 9,
      requests: 7,
      skipped: 1,
      bad: 1,
      badExamples: [{ file: log, line: 6, reason: 'not a combined or JSON access line' }],
      formats: { tollgate: 5, combined: 1, caddy: 1 },
      from: '2026-11-16T10:00:01.000Z',
      to: '2026-11-16T10:00:07.000Z',
      outOfOrder: 0,
    },
    candidate: result(2),
    baseline: result(3),
    diff: {
      routes: [
        { name: 'orders', refused: { baseline: 2, candidate: 3, change: 1 } },
        { name: 'api', refused: { baseline: 0, candidate: 0, change: 0 } },
      ],
      limiters: [
        {
          name: 'api',
          refused: { baseline: 0, candidate: 0, change: 0 },
          keysRefused: { baseline: 0, candidate: 0, change: 0 },
          keysNewlyRefused: 0,
          keysNoLongerRefused: 0,
        },
        {
          name: 'orders',
          refused: { baseline: 2, candidate: 3, change: 1 },
          keysRefused: { baseline: 1, candidate: 1, change: 0 },
          keysNewlyRefused: 0,
          keysNoLongerRefused: 0,
        },
      ],
    },
  });
  expect(run.stderr).toMatch(/^replayed 9 lines in \d+\.\d\d s: \d+ lines\/s, \d+ lines per CPU second\n$/);
});

test('the tables: the input, the peak-use buckets, the top keys and the difference', async () => {
  const run = await runCli(['replay', '--config', candidate, '--baseline', baseline, '--top', '1', log]);
  expect(run.code, run.stderr).toBe(0);
  const short = `${shop.slice(0, 13)}…`;
  expect(run.stdout).toContain(
    [
      `replayed 7 requests (5 tollgate, 1 combined, 1 caddy) from 2026-11-16T10:00:01.000Z to 2026-11-16T10:00:07.000Z; 1 bad lines, 1 other lines`,
      `  bad line ${log}:6: not a combined or JSON access line`,
      '',
      `candidate ${candidate}:`,
      '',
      'route   requests  refused  shadow-refused  limiters',
      'orders  5         3        0               api,orders',
      'api     1         0        0               api',
      '(no route: 1 requests, answered 404)',
      '',
      'peak use of the limit per key (keys in each bucket):',
      'limiter  requests  refused    keys  keys refused  0-50%  50-80%  80-100%  refused  windows',
      'api      6         0 (0.0%)   2     0             2      0       0        0        100/1m by ip',
      'orders   5         3 (60.0%)  1     1             0      0       0        1        2/1m by ip',
      '',
      'top keys of api (hashed):',
      'key             requests  refused  peak',
      `${short}  5         0        2%`,
    ].join('\n'),
  );
  expect(run.stdout).toContain(
    [
      'against the baseline (baseline -> candidate):',
      '',
      'route   refused  change',
      'orders  2 -> 3   +1',
      'api     0 -> 0   0',
      '',
      'limiter  refused  change  keys refused  newly refused  no longer refused',
      'api      0 -> 0   0       0 -> 0        0              0',
      'orders   2 -> 3   +1      1 -> 1        0              0',
    ].join('\n'),
  );
});

test('no log, or one that cannot be read: a usage error (2), a read error (1)', async () => {
  const noLog = await runCli(['replay', '--config', candidate]);
  expect(noLog.code).toBe(2);
  expect(noLog.stderr).toMatch(/^replay needs at least one LOG file\nusage:/);
  const missing = join(dir, 'missing.log');
  const unreadable = await runCli(['replay', '--config', candidate, missing]);
  expect(unreadable.code).toBe(1);
  expect(unreadable.stderr).toBe(
    `cannot read ${missing}: ENOENT: no such file or directory, open '${missing}'\n`,
  );
  const badTop = await runCli(['replay', '--config', candidate, '--top', 'many', log]);
  expect(badTop.code).toBe(2);
  expect(badTop.stderr).toMatch(/^--top must be a whole number\n/);
});

test('check and explain say when the access log carries the key parts replay reads', async () => {
  const config = 'docs/examples/replay/candidate.yaml';
  const check = await runCli(['check', '--config', config]);
  expect(check.code, check.stderr).toBe(0);
  expect(check.stdout).toContain(
    'store: memory, on error: open\naccess log: host and hashed key parts (log.keyParts)\n',
  );
  const explain = await runCli(['explain', '--config', config, 'GET', 'http://api.example.com/api/a']);
  expect(explain.code, explain.stderr).toBe(0);
  expect(explain.stdout).toContain(
    'in progress (live state, per process)\naccess log: host and hashed key parts (log.keyParts)\nclient ip: 127.0.0.1\n',
  );
});

test('a log the compact lane cannot stand for the store on is replayed again on the generic path', async () => {
  // Two keys with one statistics key ("a b c": values joined by spaces) and two store keys: the
  // store counts them apart (both let by), the report sums them under one key.
  const pair = join(dir, 'pair.yaml');
  writeFileSync(
    pair,
    `listeners: [{ host: 127.0.0.1, port: 0 }]
upstreams: { app: { url: "http://127.0.0.1:9" } }
limiters: { pair: { windows: [{ limit: 1, period: 1m, key: [ip, user_agent] }] } }
routes: [{ name: all, paths: ["/*"], upstream: app, limiters: [pair] }]
`,
  );
  const line = (second: number, ip: string, ua: string) =>
    JSON.stringify({
      time: `2026-11-16T10:00:0${second}.000Z`,
      reqId: `r${second}`,
      method: 'GET',
      path: '/x',
      keys: { ip, user_agent: ua },
    });
  const spaced = join(dir, 'spaced.log');
  writeFileSync(spaced, `${line(1, 'a b', 'c')}\n${line(2, 'a', 'b c')}\n`);
  const run = await runCli(['replay', '--config', pair, '--json', spaced]);
  expect(run.code, run.stderr).toBe(0);
  const [limiter] = JSON.parse(run.stdout).candidate.limiters;
  expect(limiter).toMatchObject({ name: 'pair', requests: 2, refused: 0, keys: 1, keysRefused: 0 });
});
