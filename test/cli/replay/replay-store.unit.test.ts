// Replay's own store against the gateway's memory store: the same results, hit by hit, over random
// windows (fixed, sliding, token bucket, shadow, costs, bans) and sweeps; and whole replays with
// either store give the same report. Also the store's bound.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { LogRecord } from '../../../src/cli/replay/log-formats.js';
import { ReplayStore, type Slot } from '../../../src/cli/replay/replay-store.js';
import { simulationReport } from '../../../src/cli/replay/report.js';
import { Simulation } from '../../../src/cli/replay/simulate.js';
import { loadConfigText } from '../../../src/rules/load.js';
import { MemoryStore } from '../../../src/store/memory-store.js';
import type { WindowRequest, WindowResult } from '../../../src/store/window-store.js';
import { gatewayStoreSimulation } from '../../helpers/replay-simulation.js';

const T0 = Date.parse('2026-11-16T00:00:00Z');

/** A window, as a request without its key (the key is its index and the client's). */
const windowArb = fc.record({
  limit: fc.integer({ min: 1, max: 5 }),
  periodMs: fc.constantFrom(1000, 5000, 60_000),
  enforce: fc.boolean(),
  algorithm: fc.constantFrom(undefined, 'sliding' as const, 'token-bucket' as const),
  rate: fc.integer({ min: 1, max: 4 }),
});
const banArb = fc.option(
  fc.record({
    after: fc.integer({ min: 1, max: 3 }),
    withinMs: fc.constantFrom(2000, 30_000),
    forMs: fc.constantFrom(1000, 10_000),
  }),
  { nil: undefined },
);
const eventArb = fc.record({
  plan: fc.integer({ min: 0, max: 3 }),
  client: fc.integer({ min: 0, max: 2 }),
  gapMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 120_000 })),
  cost: fc.constantFrom(undefined, 0, 1, 2, 3),
  sweep: fc.boolean(),
});

type WindowSpec = typeof windowArb extends fc.Arbitrary<infer T> ? T : never;
type BanSpec = typeof banArb extends fc.Arbitrary<infer T> ? T : never;

/** Plan p of client c: some of the windows, in order, the first carrying the ban when there is one. */
function planOf(windows: readonly WindowSpec[], ban: BanSpec, p: number, c: number): WindowRequest[] {
  const chosen = windows.map((w, i) => ({ w, i })).filter(({ i }) => ((p + 1) >> i) % 2 === 1 || i === p);
  return chosen.map(({ w, i }, j) => {
    const r: WindowRequest = {
      key: `w${i}:${c}`,
      limit: w.limit,
      periodMs: w.periodMs,
      enforce: w.enforce,
      cacheWhenSpent: false,
      ...(w.algorithm ? { algorithm: w.algorithm } : {}),
      ...(w.algorithm === 'token-bucket' ? { rate: w.rate } : {}),
    };
    if (j > 0 || !ban) return r;
    return { ...r, ban: { key: `ban:${c}`, strikesKey: `strikes:${c}`, span: chosen.length, ...ban } };
  });
}

describe('the same results as the memory store', () => {
  test('hit by hit, with slots cached per plan, across sweeps and bans', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(windowArb, { minLength: 1, maxLength: 3 }),
        banArb,
        fc.array(eventArb, { maxLength: 80 }),
        async (windows, ban, events) => {
          let now = T0;
          const memory = new MemoryStore({ maxKeys: 1000, sweepIntervalMs: 3_600_000, now: () => now });
          const replay = new ReplayStore({ maxKeys: 1000, now: () => now });
          const slots = new Map<string, (Slot | undefined)[]>();
          for (const e of events) {
            now += e.gapMs;
            const planned = planOf(windows, ban, e.plan, e.client);
            const requests = e.cost === undefined ? planned : planned.map((r) => ({ ...r, cost: e.cost }));
            const cached = slots.get(`${e.plan}:${e.client}`) ?? [];
            slots.set(`${e.plan}:${e.client}`, cached);
            expect(replay.hitNow(requests, cached)).toEqual(memory.hitNow(requests));
            if (e.sweep) {
              memory.sweep(now);
              replay.sweep(now);
            }
          }
          await Promise.all([memory.close(), replay.close()]);
        },
      ),
      { numRuns: 300 },
    );
  });
});

/** What the simulation reads of a result (decideNow leaves the retry time out). */
const decision = (r: WindowResult) => ({
  count: r.count,
  limit: r.limit,
  resetAtMs: r.resetAtMs,
  allowed: r.allowed,
  bannedUntilMs: r.bannedUntilMs,
  banStarted: r.banStarted,
});

test("decideNow decides as hitNow, from the client's requests or from the same without their keys", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(windowArb, { minLength: 1, maxLength: 3 }),
      banArb,
      fc.boolean(),
      fc.array(eventArb, { maxLength: 80 }),
      async (windows, ban, unkeyed, events) => {
        let now = T0;
        const slow = new ReplayStore({ maxKeys: 6, now: () => now });
        const fast = new ReplayStore({ maxKeys: 6, now: () => now });
        const slots = [new Map<string, (Slot | undefined)[]>(), new Map<string, (Slot | undefined)[]>()];
        const cached = (i: number, id: string) => {
          const c = slots[i]!.get(id) ?? [];
          slots[i]!.set(id, c);
          return c;
        };
        for (const e of events) {
          now += e.gapMs;
          // The simulation reads unkeyed requests only for windows without a ban.
          const planned = planOf(windows, unkeyed ? undefined : ban, e.plan, e.client);
          const requests = e.cost === undefined ? planned : planned.map((r) => ({ ...r, cost: e.cost }));
          const id = `${e.plan}:${e.client}`;
          const want = slow.hitNow(requests, cached(0, id)).map(decision);
          const got = unkeyed
            ? fast.decideNow(
                requests.map((r) => ({ ...r, key: '' })),
                cached(1, id),
                requests,
              )
            : fast.decideNow(requests, cached(1, id));
          expect(got.map(decision)).toEqual(want);
          if (e.sweep) {
            slow.sweep(now);
            fast.sweep(now);
          }
        }
      },
    ),
    { numRuns: 300 },
  );
});

const config = `
listeners: [{ host: 127.0.0.1, port: 0 }]
upstreams: { app: { url: "http://127.0.0.1:9" } }
limiters:
  api:
    windows:
      - { limit: 4, period: 10s, algorithm: sliding, key: [ip] }
      - { limit: 9, period: 1m, key: [ip] }
  orders:
    windows: [{ limit: 2, period: 10s, algorithm: token-bucket, burst: 3, key: [ip, user_agent] }]
    ban: { after: 2, within: 1m, for: 30s }
  daily:
    shadow: true
    windows: [{ limit: 6, period: 1d, align: calendar, key: [ip] }]
routes:
  - { name: orders, methods: [POST], paths: [/orders], upstream: app, limiters: [api, orders] }
  - { name: api, paths: [/api], upstream: app, limiters: [api, daily] }
`;

const lineArb = fc.record({
  gapMs: fc.oneof(
    fc.constant(0),
    fc.integer({ min: 0, max: 5000 }),
    fc.integer({ min: 0, max: 4 * 3_600_000 }),
  ),
  ip: fc.integer({ min: 0, max: 3 }),
  ua: fc.constantFrom(undefined, 'a', 'b'),
  path: fc.constantFrom('/orders', '/api', '/none'),
});

test('a replay with either store gives the same report', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(lineArb, { maxLength: 120 }), async (lines) => {
      const table = loadConfigText(config, 'test.yaml', {});
      const own = new Simulation(table);
      const gateways = gatewayStoreSimulation(table);
      let t = T0;
      for (const l of lines) {
        t += l.gapMs;
        const rec: LogRecord = {
          timeMs: t,
          method: 'POST',
          target: l.path,
          host: undefined,
          client: `10.0.0.${l.ip}`,
          userAgent: l.ua,
          keys: undefined,
        };
        own.feed(rec, t);
        gateways.feed(rec, t);
      }
      await Promise.all([own.close(), gateways.close()]);
      expect(simulationReport(own, 5)).toEqual(simulationReport(gateways, 5));
    }),
    { numRuns: 150 },
  );
});

test('bounded: a full store sweeps, then evicts the slot that resets soonest, never the current ones', () => {
  let now = T0;
  const store = new ReplayStore({ maxKeys: 3, now: () => now });
  const hit = (key: string, periodMs = 10_000) =>
    store.hitNow([{ key, limit: 5, periodMs, enforce: true, cacheWhenSpent: false }])[0]!;
  hit('a', 1000);
  hit('b');
  hit('c');
  expect(store.size).toBe(3);
  now += 2000; // a has expired: swept to make room for d
  expect(hit('d')).toEqual({ count: 1, limit: 5, resetAtMs: now + 10_000, allowed: true });
  expect(store.size).toBe(3);
  expect(hit('b').count).toBe(2);
  hit('e'); // nothing expired: b, the soonest to reset, is evicted
  expect(store.size).toBe(3);
  expect(hit('c').count).toBe(2);
  expect(hit('b').count).toBe(1); // counted afresh (c, now the soonest, evicted for it)
  expect(store.size).toBe(3);
});
