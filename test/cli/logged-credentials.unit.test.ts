// The credential fields of tollgate's access line as replay reads them: a value, null (the gateway
// checked and the request had none: no warning, nothing matched) or absent (not logged: a warning).
import { describe, expect, test } from 'vitest';
import { parseLine, type LogRecord } from '../../src/cli/replay/log-formats.js';
import { simulationReport } from '../../src/cli/replay/report.js';
import { Simulation } from '../../src/cli/replay/simulate.js';
import { OverrideTable, parseOverrides } from '../../src/limits/overrides.js';
import { loadConfigText } from '../../src/rules/load.js';

const T0 = Date.parse('2026-11-16T10:00:00Z');

const line = (fields: object) =>
  JSON.stringify({ time: '2026-11-16T10:00:00.000Z', reqId: 'r', method: 'GET', path: '/x', ...fields });

describe('parsing', () => {
  test('a string is kept, null is kept as null, anything else is not logged', () => {
    const parsed = parseLine(line({ tier: 'pro', token: null, workspace: 42, charged: 3 }));
    expect(parsed.kind === 'record' && parsed.record).toMatchObject({
      tier: 'pro',
      token: null,
      workspace: undefined,
      sub: undefined,
      charged: 3,
    });
  });
});

describe('replaying', () => {
  const config = `
listeners: [{ host: 127.0.0.1, port: 0 }]
upstreams: { app: { url: "http://127.0.0.1:9" } }
tiers: { jwt: { claim: plan, secret: '${'s'.repeat(32)}' } }
limiters:
  l:
    windows: [{ limit: 1, period: 1m, key: [ip], tiers: { pro: { limit: 3 } } }]
    allow: { tokens: [t-free], workspaces: [ws-free] }
routes:
  - { name: r, paths: [/x], upstream: app, limiters: [l] }
`;
  const overrides = OverrideTable.compile(
    parseOverrides({ 'sub:vip': 'unlimited', 'token:t1': 'pro', 'workspace:w1': 'pro' }).entries,
  );

  async function replay(fields: Partial<LogRecord>, n: number) {
    const sim = new Simulation(loadConfigText(config, 'c.yaml', {}), overrides);
    for (let i = 0; i < n; i++) {
      const rec: LogRecord = {
        timeMs: T0 + i * 1000,
        method: 'GET',
        target: '/x',
        host: undefined,
        client: '203.0.113.1',
        userAgent: undefined,
        keys: undefined,
        ...fields,
      };
      sim.feed(rec, rec.timeMs);
    }
    await sim.close();
    return simulationReport(sim, 1);
  }

  test('null fields: known to be none, no warning; the default tier', async () => {
    const report = await replay({ tier: null, token: null, workspace: null, sub: null }, 3);
    expect(report.warnings).toEqual([]);
    expect(report.routes[0]).toMatchObject({ requests: 3, refused: 2, tiers: { default: 3 } });
  });

  test('logged values decide: the JWT tier, an override by sub', async () => {
    const known = { token: null, workspace: null };
    expect((await replay({ ...known, tier: 'pro', sub: 'u' }, 4)).routes[0]).toMatchObject({
      refused: 1,
      tiers: { 'pro (jwt)': 4 },
    });
    expect((await replay({ ...known, tier: null, sub: 'vip' }, 4)).routes[0]).toMatchObject({
      refused: 0,
      tiers: { 'unlimited (override)': 4 },
    });
  });

  test('absent fields: one warning per limiter and field', async () => {
    const report = await replay({}, 2);
    // (token and workspace are said by the overrides and by the allow list: counted by both.)
    expect(report.warnings.map((w) => [w.field, w.requests])).toEqual([
      ['token', 4],
      ['workspace', 4],
      ['sub', 2],
      ['tier', 2],
    ]);
  });
});
