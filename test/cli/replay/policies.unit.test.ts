// Replay simulates the gateway's policies on small hand-made logs, each number checked: weighted
// cost (cost: N, by body bytes), countOnly and chargeAfter from the logged status and cost, allow
// and deny lists, bans, tiers and overrides; and says which fields a line lacked.
import { describe, expect, test } from 'vitest';
import type { LogRecord } from '../../../src/cli/replay/log-formats.js';
import { simulationReport, type SimulationReport } from '../../../src/cli/replay/report.js';
import { Simulation } from '../../../src/cli/replay/simulate.js';
import { OverrideTable, parseOverrides } from '../../../src/limits/overrides.js';
import { loadConfigText } from '../../../src/rules/load.js';

const T0 = Date.parse('2026-11-16T10:00:00Z');

const configOf = (limiter: string, extra = '') => `
listeners: [{ host: 127.0.0.1, port: 0 }]
upstreams: { app: { url: "http://127.0.0.1:9" } }
${extra}
limiters:
  l: ${limiter}
routes:
  - { name: r, paths: [/x], upstream: app, limiters: [l] }
`;

type Line = Partial<LogRecord> & { client: string };

/** Replays `lines` one second apart, each a POST /x from its client. */
async function replay(config: string, lines: readonly Line[], overrides?: object): Promise<SimulationReport> {
  const table = overrides && OverrideTable.compile(parseOverrides(overrides).entries);
  const sim = new Simulation(loadConfigText(config, 'test.yaml', {}), table);
  lines.forEach((line, i) => {
    const rec: LogRecord = {
      timeMs: T0 + i * 1000,
      method: 'POST',
      target: '/x',
      host: undefined,
      userAgent: undefined,
      keys: undefined,
      ...line,
    };
    sim.feed(rec, rec.timeMs);
  });
  await sim.close();
  return simulationReport(sim, 5);
}

const repeat = (n: number, line: Line): Line[] => Array.from({ length: n }, () => line);
const route = (r: SimulationReport) => r.routes[0]!;
const limiter = (r: SimulationReport) => r.limiters[0]!;
const A = '198.51.100.1';

describe('weighted cost', () => {
  test('cost: N spends N a request: 12 a minute lets two requests of 5 by', async () => {
    const report = await replay(
      configOf('{ cost: 5, windows: [{ limit: 12, period: 1m, key: [ip] }] }'),
      repeat(3, { client: A }),
    );
    expect(route(report)).toMatchObject({ requests: 3, refused: 1 });
    expect(limiter(report)).toMatchObject({ requests: 3, refused: 1, keysRefused: 1 });
    expect(limiter(report).topKeys[0]).toMatchObject({ requests: 3, refused: 1, peakPercent: 83 });
    expect(report.warnings).toEqual([]);
  });

  test('cost by body bytes from the logged "bytes"; a line without it is priced as no body, and said', async () => {
    const report = await replay(
      configOf(
        '{ cost: { from: content-length, per: 1KB }, windows: [{ limit: 5, period: 1m, key: [ip] }] }',
      ),
      [...repeat(3, { client: A, bytes: 2048 }), { client: A }],
    );
    // 2 + 2 = 4, then 6 > 5 refused, then 1 more (no bytes) makes 5.
    expect(route(report)).toMatchObject({ requests: 4, refused: 1 });
    expect(limiter(report).topKeys[0]).toMatchObject({ requests: 4, refused: 1, peakPercent: 100 });
    expect(report.warnings).toEqual([
      {
        limiter: 'l',
        field: 'bytes',
        message: 'cost by body bytes: the line has no "bytes"; charged as a request without a body (1)',
        requests: 1,
      },
    ]);
  });

  test('countOnly counts only the logged statuses, after the response', async () => {
    const statuses = [200, 401, 401, 401, 200, 200];
    const report = await replay(
      configOf('{ countOnly: [401], windows: [{ limit: 2, period: 1m, key: [ip] }] }'),
      statuses.map((status) => ({ client: A, status })),
    );
    // Two 401s fill the window; the third 401 and the 200s after it find no room.
    expect(route(report)).toMatchObject({ requests: 6, refused: 3 });
    expect(report.warnings).toEqual([]);
  });

  test('chargeAfter charges the logged "charged"; a line without it charges 0, and is said', async () => {
    const report = await replay(
      configOf(
        '{ chargeAfter: { header: X-Cost, max: 100 }, windows: [{ limit: 10, period: 1m, key: [ip] }] }',
      ),
      [{ client: A }, ...repeat(4, { client: A, charged: 4 })],
    );
    // 0, then 4, 8, 12 charged: the fifth request finds 12 > 10 - 1.
    expect(route(report)).toMatchObject({ requests: 5, refused: 1 });
    expect(report.warnings).toEqual([
      {
        limiter: 'l',
        field: 'charged',
        message: 'chargeAfter x-cost: the line has no "charged"; charged 0',
        requests: 1,
      },
    ]);
  });
});

describe('allow and deny lists, bans', () => {
  test('allow: exempt, uncounted; deny: 403 before counting; others counted', async () => {
    const report = await replay(
      configOf(`
    windows: [{ limit: 1, period: 1m, key: [ip] }]
    allow: { addresses: ['10.0.0.0/8'] }
    deny: { addresses: ['203.0.113.0/24'] }`),
      [...repeat(2, { client: '10.0.0.1' }), { client: '203.0.113.5' }, ...repeat(2, { client: A })],
    );
    expect(route(report)).toMatchObject({ requests: 5, refused: 1, denied: 1, banned: 0 });
    expect(limiter(report)).toMatchObject({ requests: 2, refused: 1, exempt: 2, denied: 1, keys: 1 });
    expect(report.warnings).toEqual([]);
  });

  test('a list naming tokens, and lines without "token" or a client address: said', async () => {
    const report = await replay(
      configOf(`
    windows: [{ limit: 1, period: 1m, key: [ip] }]
    allow: { tokens: ['7'] }`),
      [{ client: A, token: '7' }, { client: A }, { client: 'hashed-address' }],
    );
    expect(limiter(report)).toMatchObject({ exempt: 1, requests: 2, refused: 0 });
    expect(report.warnings.map((w) => [w.field, w.requests])).toEqual([
      ['token', 2],
      ['client', 1],
    ]);
  });

  test('ban: the second refusal within 10m bans for 1h; banned requests count in no window', async () => {
    const report = await replay(
      configOf('{ windows: [{ limit: 1, period: 1m, key: [ip] }], ban: { after: 2, within: 10m, for: 1h } }'),
      [...repeat(5, { client: A }), { client: '198.51.100.2' }],
    );
    expect(route(report)).toMatchObject({ requests: 6, refused: 2, banned: 2 });
    expect(limiter(report)).toMatchObject({
      requests: 4,
      refused: 2,
      banned: 2,
      bansStarted: 1,
      keysRefused: 1,
    });
  });
});

describe('tiers and overrides', () => {
  const tiered = configOf(
    '{ windows: [{ limit: 2, period: 1m, key: [ip], tiers: { pro: { limit: 4 } } }] }',
    `identity:
  workspaceTokens: { source: static, static: [{ id: acme, sha256: '${'a'.repeat(64)}', plan: pro }] }
tiers: { workspaceTokenPlan: true }`,
  );
  const overrides = { 'ip:198.51.100.0/24': 'pro', 'ip:192.0.2.9': 'unlimited', 'token:t1': { limit: 1 } };

  test('an override, then the logged tier (the plan), then the default; counted by tier', async () => {
    const report = await replay(
      tiered,
      [
        ...repeat(5, { client: A }),
        ...repeat(3, { client: '192.0.2.9' }),
        ...repeat(3, { client: '10.0.0.1', tier: 'pro' }),
        ...repeat(3, { client: '10.0.0.2', token: 't1' }),
      ],
      overrides,
    );
    expect(route(report)).toMatchObject({
      requests: 14,
      // A: 4 of 5 at pro; the token's override: 1 of 3.
      refused: 3,
      tiers: { 'pro (override)': 5, 'unlimited (override)': 3, 'pro (plan)': 3, 'limit 1 (override)': 3 },
    });
    expect(limiter(report)).toMatchObject({ requests: 11, refused: 3, exempt: 3, keys: 3 });
  });

  test('without a logged tier: the default limit, and a warning per request', async () => {
    const report = await replay(tiered, repeat(3, { client: '10.0.0.3' }), overrides);
    expect(route(report)).toMatchObject({ requests: 3, refused: 1, tiers: { default: 3 } });
    expect(report.warnings).toEqual([
      {
        limiter: 'l',
        field: 'token',
        message: 'overrides by token: the line has no "token"; not matched',
        requests: 3,
      },
      {
        limiter: 'l',
        field: 'tier',
        message: 'the line has no "tier": counted at the default tier',
        requests: 3,
      },
    ]);
  });
});
