// The replay's simulation against a reference model of fixed windows: routes, limiters (one in
// shadow), all-or-nothing counting, expiry on the log's clock; and the key parts it derives.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { LogRecord } from '../../../src/cli/replay/log-formats.js';
import { diffReport, simulationReport, type SimulationReport } from '../../../src/cli/replay/report.js';
import { Simulation } from '../../../src/cli/replay/simulate.js';
import { hashPart } from '../../../src/identity/hash.js';
import { loadConfigText } from '../../../src/rules/load.js';

const T0 = Date.parse('2026-11-16T00:00:00Z');

const configText = (
  a: { limit: number; period: number },
  b: { limit: number; period: number; shadow: boolean },
) => `
listeners: [{ host: 127.0.0.1, port: 0 }]
upstreams: { app: { url: "http://127.0.0.1:9" } }
limiters:
  a: { windows: [{ limit: ${a.limit}, period: ${a.period}s, key: [ip] }] }
  b: { shadow: ${b.shadow}, windows: [{ limit: ${b.limit}, period: ${b.period}s, key: [ip, user_agent] }] }
routes:
  - { name: both, methods: [POST], paths: [/both], upstream: app, limiters: [a, b] }
  - { name: one, paths: [/one], upstream: app, limiters: [a] }
  - { name: open, paths: [/open], upstream: app }
`;

interface Event {
  readonly gapMs: number;
  readonly ip: number;
  readonly ua: number;
  readonly route: 'both' | 'one' | 'open' | 'none';
}

const rawRecord = (e: Event, timeMs: number): LogRecord => ({
  timeMs,
  method: 'POST',
  target: e.route === 'none' ? '/nowhere' : `/${e.route}`,
  host: undefined,
  client: `10.0.0.${e.ip}`,
  userAgent: `ua${e.ua}`,
  keys: undefined,
});

/** The same request as tollgate logs it with log.keyParts. */
const loggedRecord = (e: Event, timeMs: number): LogRecord => ({
  ...rawRecord(e, timeMs),
  userAgent: undefined,
  keys: { ip: hashPart(`ip=10.0.0.${e.ip}`), user_agent: hashPart(`ua=ua${e.ua}`) },
});

async function simulate(
  config: string,
  events: readonly Event[],
  as: (e: Event, t: number) => LogRecord = rawRecord,
): Promise<{ report: SimulationReport; sim: Simulation }> {
  const sim = new Simulation(loadConfigText(config, 'test.yaml', {}));
  let t = T0;
  for (const e of events) sim.feed(as(e, (t += e.gapMs)), t);
  await sim.close();
  return { report: simulationReport(sim, 3), sim };
}

/** Reference: fixed windows from a key's first hit; a request counts in all its windows or none. */
function model(
  a: { limit: number; period: number },
  b: { limit: number; period: number; shadow: boolean },
  events: readonly Event[],
) {
  const windows = new Map<string, { count: number; resetAt: number }>();
  const limiters = { a: { ...a, shadow: false }, b };
  const routes = { both: ['a', 'b'], one: ['a'], open: [] } as const;
  const out = {
    unrouted: 0,
    routes: { both: [0, 0, 0], one: [0, 0, 0], open: [0, 0, 0] } as Record<string, number[]>,
    limiters: {} as Record<
      string,
      { requests: number; refused: number; keys: Map<string, { refused: number; peak: number }> }
    >,
  };
  for (const name of ['a', 'b']) out.limiters[name] = { requests: 0, refused: 0, keys: new Map() };
  let t = T0;
  for (const e of events) {
    t += e.gapMs;
    if (e.route === 'none') {
      out.unrouted++;
      continue;
    }
    const used = routes[e.route].map((name) => {
      const l = limiters[name];
      const key = name === 'a' ? `${e.ip}` : `${e.ip}|${e.ua}`;
      const w = windows.get(`${name}:${key}`);
      const live = w && w.resetAt > t ? w.count : 0;
      return { name, l, key, live, spent: live + 1 > l.limit };
    });
    const blocked = used.some((u) => !u.l.shadow && u.spent);
    const r = out.routes[e.route]!;
    r[0]!++;
    if (blocked) r[1]!++;
    else if (used.some((u) => u.spent)) r[2]!++;
    for (const u of used) {
      if (!blocked) {
        const w = windows.get(`${u.name}:${u.key}`);
        if (!w || w.resetAt <= t)
          windows.set(`${u.name}:${u.key}`, { count: 1, resetAt: t + u.l.period * 1000 });
        else w.count++;
      }
      const s = out.limiters[u.name]!;
      s.requests++;
      const k = s.keys.get(u.key) ?? { refused: 0, peak: 0 };
      s.keys.set(u.key, k);
      if (u.spent) {
        s.refused++;
        k.refused++;
      } else k.peak = Math.max(k.peak, (blocked ? u.live : u.live + 1) / u.l.limit);
    }
  }
  return out;
}

const eventArb = fc.record({
  gapMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 6000 })),
  ip: fc.integer({ min: 0, max: 2 }),
  ua: fc.integer({ min: 0, max: 1 }),
  route: fc.constantFrom('both', 'one', 'open', 'none'),
}) as fc.Arbitrary<Event>;
const windowArb = fc.record({ limit: fc.integer({ min: 1, max: 4 }), period: fc.constantFrom(1, 5, 10) });

describe('against the reference model', () => {
  test('requests, refusals (shadow apart), keys and the peak-use buckets per route and limiter', async () => {
    await fc.assert(
      fc.asyncProperty(
        windowArb,
        windowArb,
        fc.boolean(),
        fc.array(eventArb, { maxLength: 60 }),
        async (a, bw, shadow, events) => {
          const b = { ...bw, shadow };
          const { report } = await simulate(configText(a, b), events);
          const m = model(a, b, events);
          expect(report.unrouted).toBe(m.unrouted);
          expect(report.routes.map((r) => [r.name, r.requests, r.refused, r.shadowRefused])).toEqual(
            ['both', 'one', 'open'].map((n) => [n, ...m.routes[n]!]),
          );
          for (const l of report.limiters) {
            const s = m.limiters[l.name]!;
            const keys = [...s.keys.values()];
            const bucket = (k: { refused: number; peak: number }) =>
              k.refused ? 'refused' : k.peak < 0.5 ? '0-50' : k.peak < 0.8 ? '50-80' : '80-100';
            expect(l).toMatchObject({
              requests: s.requests,
              refused: s.refused,
              keys: keys.length,
              keysRefused: keys.filter((k) => k.refused > 0).length,
              peakUse: {
                '0-50': keys.filter((k) => bucket(k) === '0-50').length,
                '50-80': keys.filter((k) => bucket(k) === '50-80').length,
                '80-100': keys.filter((k) => bucket(k) === '80-100').length,
                refused: keys.filter((k) => bucket(k) === 'refused').length,
              },
            });
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  test("tollgate's lines with log.keyParts replay exactly as the raw requests they log", async () => {
    await fc.assert(
      fc.asyncProperty(windowArb, windowArb, fc.array(eventArb, { maxLength: 40 }), async (a, b, events) => {
        const config = configText(a, { ...b, shadow: false });
        const raw = await simulate(config, events, rawRecord);
        const logged = await simulate(config, events, loggedRecord);
        expect(logged.report).toEqual(raw.report);
      }),
      { numRuns: 50 },
    );
  });
});

describe('keys and their report', () => {
  const config = configText({ limit: 2, period: 60 }, { limit: 10, period: 60, shadow: false });
  const burst = (ip: number, n: number, route: Event['route'] = 'one'): Event[] =>
    Array.from({ length: n }, () => ({ gapMs: 10, ip, ua: 0, route }));

  test('top keys by refusals, hashed as the gateway hashes them, with their peak use', async () => {
    const { report } = await simulate(config, [...burst(1, 5), ...burst(2, 3), ...burst(3, 1)]);
    expect(report.limiters.find((l) => l.name === 'a')!.topKeys).toEqual([
      { key: `ip=${hashPart('ip=10.0.0.1')}`, requests: 5, refused: 3, peakPercent: 100 },
      { key: `ip=${hashPart('ip=10.0.0.2')}`, requests: 3, refused: 1, peakPercent: 100 },
      { key: `ip=${hashPart('ip=10.0.0.3')}`, requests: 1, refused: 0, peakPercent: 50 },
    ]);
  });

  test('the diff against a baseline: refusals and keys, newly and no longer refused', async () => {
    const events = [...burst(1, 5), ...burst(2, 3)];
    const candidate = await simulate(config, events);
    const baseline = await simulate(
      configText({ limit: 4, period: 60 }, { limit: 10, period: 60, shadow: false }),
      events,
    );
    const diff = diffReport(candidate.report, baseline.report, candidate.sim, baseline.sim);
    expect(diff.routes.find((r) => r.name === 'one')).toEqual({
      name: 'one',
      refused: { baseline: 1, candidate: 4, change: 3 },
    });
    expect(diff.limiters.find((l) => l.name === 'a')).toEqual({
      name: 'a',
      refused: { baseline: 1, candidate: 4, change: 3 },
      keysRefused: { baseline: 1, candidate: 2, change: 1 },
      keysNewlyRefused: 1,
      keysNoLongerRefused: 0,
    });
  });

  test('a part the log lacks is counted, and keyed as the gateway keys it when missing', async () => {
    const jwtConfig = `
listeners: [{ host: 127.0.0.1, port: 0 }]
identity: { jwt: { secret: "0123456789abcdef0123456789abcdef", algorithms: [HS256] } }
upstreams: { app: { url: "http://127.0.0.1:9" } }
limiters:
  session: { windows: [{ limit: 1, period: 1m, key: [jwt] }] }
routes:
  - { name: chat, paths: [/chat], upstream: app, limiters: [session] }
`;
    const sim = new Simulation(loadConfigText(jwtConfig, 'test.yaml', {}));
    const rec = (client: string): LogRecord => ({
      ...rawRecord({ gapMs: 0, ip: 0, ua: 0, route: 'one' }, T0),
      target: '/chat',
      client,
    });
    sim.feed(rec('10.0.0.1'), T0);
    sim.feed(rec('10.0.0.1'), T0);
    sim.feed(rec('10.0.0.2'), T0);
    const report = simulationReport(sim, 5);
    expect(report.missingKeyParts).toEqual({ jwt: 3 });
    expect(report.limiters[0]!.topKeys).toEqual([
      { key: `jwt=${hashPart('jwt!ip=10.0.0.1')}`, requests: 2, refused: 1, peakPercent: 100 },
      { key: `jwt=${hashPart('jwt!ip=10.0.0.2')}`, requests: 1, refused: 0, peakPercent: 100 },
    ]);
  });

  test('a token bucket: its burst at once, then its rate, on the log clock', async () => {
    const bucket = `
listeners: [{ host: 127.0.0.1, port: 0 }]
upstreams: { app: { url: "http://127.0.0.1:9" } }
limiters:
  tb: { windows: [{ limit: 1, period: 1s, algorithm: token-bucket, burst: 2, key: [ip] }] }
routes:
  - { name: one, paths: [/one], upstream: app, limiters: [tb] }
`;
    // 3 at once: 2 pass (the burst), 1 refused; 1 s later one token is back: 1 passes, 1 refused.
    const gaps = [0, 0, 0, 1000, 0];
    const { report } = await simulate(
      bucket,
      gaps.map((gapMs) => ({ gapMs, ip: 1, ua: 0, route: 'one' })),
    );
    expect(report.limiters[0]).toMatchObject({ requests: 5, refused: 2, keysRefused: 1 });
  });
});
