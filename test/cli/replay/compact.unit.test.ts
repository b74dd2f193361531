// Replay's compact lane (one row of numbers per key of a limiter) against the generic path (replay's
// store of slots) and the gateway's memory store: the same report over random logs of fixed,
// sliding and token-bucket windows, a shadow limiter, two-part keys, raw and logged lines. Also
// which configs take it, and that it refuses (CompactUnfit) where it could not stand for the store.
import fc from 'fast-check';
import { expect, test } from 'vitest';
import {
  compactFits,
  compactRoute,
  CompactUnfit,
  CompactWindows,
  RowData,
} from '../../../src/cli/replay/compact.js';
import { KeyLevels } from '../../../src/cli/replay/client-keys.js';
import type { LogRecord } from '../../../src/cli/replay/log-formats.js';
import { simulationReport } from '../../../src/cli/replay/report.js';
import { Simulation } from '../../../src/cli/replay/simulate.js';
import { limiterStats } from '../../../src/cli/replay/stats.js';
import { hashPart } from '../../../src/identity/hash.js';
import { OverrideTable, parseOverrides } from '../../../src/limits/overrides.js';
import { loadConfigText } from '../../../src/rules/load.js';
import { gatewayStoreSimulation } from '../../helpers/replay-simulation.js';

const T0 = Date.parse('2026-11-16T00:00:00Z');

const configOf = (w: { limit: number; sliding: number; fixed: number; rate: number; burst: number }) => `
listeners: [{ host: 127.0.0.1, port: 0 }]
upstreams: { app: { url: "http://127.0.0.1:9" } }
limiters:
  api:
    windows:
      - { limit: ${w.sliding}, period: 10s, algorithm: sliding, key: [ip] }
      - { limit: ${w.fixed}, period: 1m, key: [ip] }
  orders:
    windows: [{ limit: ${w.rate}, period: 10s, algorithm: token-bucket, burst: ${w.burst}, key: [ip, user_agent] }]
  watch:
    shadow: true
    windows: [{ limit: ${w.limit}, period: 5s, key: [user_agent] }]
routes:
  - { name: orders, methods: [POST], paths: [/orders], upstream: app, limiters: [api, orders, watch] }
  - { name: api, paths: [/api/*], upstream: app, limiters: [api] }
  - { name: open, paths: [/open], upstream: app }
`;

const configArb = fc.record({
  limit: fc.integer({ min: 1, max: 4 }),
  sliding: fc.integer({ min: 1, max: 6 }),
  fixed: fc.integer({ min: 1, max: 12 }),
  rate: fc.integer({ min: 1, max: 4 }),
  burst: fc.integer({ min: 1, max: 5 }),
});

const lineArb = fc.record({
  gapMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 200_000 })),
  ip: fc.integer({ min: 0, max: 3 }),
  ua: fc.constantFrom(undefined, 'a', 'b'),
  path: fc.constantFrom('/orders', '/api/x', '/open', '/none'),
  logged: fc.boolean(),
});

type Line = typeof lineArb extends fc.Arbitrary<infer T> ? T : never;

const recordOf = (l: Line, t: number): LogRecord => ({
  timeMs: t,
  method: 'POST',
  target: l.path,
  host: undefined,
  client: `10.0.0.${l.ip}`,
  userAgent: l.logged ? undefined : l.ua,
  // As tollgate logs them with log.keyParts (a line may lack the user agent's).
  keys: l.logged
    ? {
        ip: hashPart(`ip=10.0.0.${l.ip}`),
        ...(l.ua === undefined ? {} : { user_agent: hashPart(`ua=${l.ua}`) }),
      }
    : undefined,
});

test('the compact lane gives the report of the generic path and of the memory store', async () => {
  await fc.assert(
    fc.asyncProperty(
      configArb,
      configArb,
      fc.array(lineArb, { maxLength: 150 }),
      // The clients' key cache's bound per simulation: small ones clear it every few lines.
      fc.constantFrom(undefined, 1, 2, 5),
      async (windows, other, lines, cacheBound) => {
        const table = loadConfigText(configOf(windows), 'test.yaml', {});
        // Compact simulations sharing the rows' array and the clients' key levels (as a candidate
        // and its baseline do): a twin of the config, and a baseline of other limits, routed by the
        // candidate's route index.
        const shared = { rows: new RowData(), levels: new KeyLevels(cacheBound) };
        const compact = new Simulation(table, undefined, undefined, shared);
        const twin = new Simulation(
          loadConfigText(configOf(windows), 'twin.yaml', {}),
          undefined,
          undefined,
          shared,
        );
        const baseTable = loadConfigText(configOf(other), 'baseline.yaml', {});
        const baseline = new Simulation(baseTable, undefined, undefined, shared);
        expect(compact.compact && twin.compact && baseline.compact).toBe(true);
        expect(compact.routesAs(baseline)).toBe(true);
        const generic = new Simulation(table, undefined, undefined, { compact: false });
        expect(generic.compact).toBe(false);
        const baselineAlone = new Simulation(baseTable, undefined, undefined, { compact: false });
        const memory = gatewayStoreSimulation(table);
        let t = T0;
        for (const l of lines) {
          t += l.gapMs;
          const rec = recordOf(l, t);
          const index = compact.routeIndex(rec);
          compact.feed(rec, t, index);
          baseline.feed(rec, t, index);
          for (const sim of [twin, generic, memory, baselineAlone]) sim.feed(rec, t);
        }
        const sims = [compact, twin, baseline, generic, memory, baselineAlone];
        await Promise.all(sims.map((s) => s.close()));
        const report = simulationReport(compact, 5);
        expect(report).toEqual(simulationReport(generic, 5));
        expect(report).toEqual(simulationReport(memory, 5));
        expect(simulationReport(twin, 5)).toEqual(report);
        expect(compact.missing).toEqual(generic.missing);
        expect(simulationReport(baseline, 5)).toEqual(simulationReport(baselineAlone, 5));
        expect(baseline.missing).toEqual(baselineAlone.missing);
      },
    ),
    { numRuns: 200 },
  );
});

test('configs route alike only with the same hosts, methods and paths, route by route', () => {
  const base = configOf({ limit: 1, sliding: 1, fixed: 1, rate: 1, burst: 1 });
  const sim = (text: string) => new Simulation(loadConfigText(text, 'test.yaml', {}));
  expect(sim(base).routesAs(sim(base.replace('limit: 1,', 'limit: 9,')))).toBe(true);
  expect(sim(base).routesAs(sim(base.replace('paths: [/orders]', 'paths: [/order]')))).toBe(false);
  expect(sim(base).routesAs(sim(base.replace('methods: [POST]', 'methods: [PUT]')))).toBe(false);
  const hosted = base.replace('{ name: api, paths', '{ name: api, hosts: [a.example.com], paths');
  expect(sim(base).routesAs(sim(hosted))).toBe(false);
  expect(sim(hosted).routesAs(sim(hosted))).toBe(true);
  expect(sim(hosted).routesAs(sim(hosted.replace('a.example.com', 'b.example.com')))).toBe(false);
  expect(sim(base).routesAs(sim(base.replace('- { name: open, paths: [/open], upstream: app }\n', '')))).toBe(
    false,
  );
});

test('configs with bans, calendar windows, lists, costs, tiers or overrides take the generic path', () => {
  const base = configOf({ limit: 1, sliding: 1, fixed: 1, rate: 1, burst: 1 });
  const fits = (text: string, overrides = OverrideTable.EMPTY) =>
    compactFits(loadConfigText(text, 'test.yaml', {}), overrides.empty);
  expect(fits(base)).toBe(true);
  const api = '      - { limit: 1, period: 1m, key: [ip] }\n';
  expect(fits(base.replace(api, `${api}    ban: { after: 2, within: 1m, for: 30s }\n`))).toBe(false);
  expect(fits(base.replace(api, '      - { limit: 1, period: 1d, align: calendar, key: [ip] }\n'))).toBe(
    false,
  );
  expect(fits(base.replace(api, `${api}    deny: { addresses: [10.9.9.9] }\n`))).toBe(false);
  expect(fits(base.replace(api, `${api}    cost: 2\n`))).toBe(false);
  // Windows of one limiter keyed by different parts: a row could not hold them.
  expect(fits(base.replace(api, '      - { limit: 1, period: 1m, key: [user_agent] }\n'))).toBe(false);
  const overrides = OverrideTable.compile(parseOverrides({ 'ip:10.0.0.1': 'unlimited' }).entries);
  expect(fits(base, overrides)).toBe(false);
});

test('a window key two rows would share, or one key more than the lane holds: CompactUnfit', () => {
  const table = loadConfigText(configOf({ limit: 1, sliding: 1, fixed: 1, rate: 1, burst: 1 }), 't.yaml', {});
  const route = table.routes.find((r) => r.name === 'api')!;
  const c = compactRoute(route);
  const stats = [limiterStats(route.limiters[0]!)];
  const planned = (k: string) => [
    { key: `${k}:sliding`, limit: 1, periodMs: 10_000, enforce: true, cacheWhenSpent: false },
    { key: `${k}:fixed`, limit: 1, periodMs: 60_000, enforce: true, cacheWhenSpent: false },
  ];
  const rows = new CompactWindows(5);
  const a = rows.rowsOf(c, ['a'], planned('a'), stats);
  expect(rows.rowsOf(c, ['a'], planned('a'), stats)).toEqual(a); // found again
  expect(() => rows.rowsOf(c, ['a'], planned('x'), stats)).toThrow(CompactUnfit); // one statistics key, other window keys
  expect(() => rows.rowsOf(c, ['b'], planned('a'), stats)).toThrow(CompactUnfit); // one window key, two rows
  rows.rowsOf(c, ['c'], planned('c'), stats); // 4 window keys
  expect(() => rows.rowsOf(c, ['d'], planned('d'), stats)).toThrow(CompactUnfit); // 6: past the lane's bound
});
