// Weighted cost, pure: a request's cost, a reported cost's parsing, and the overshoot bound of
// post-charges held against a reference model on the memory store: with at most C requests in
// flight and a reported cost of at most M, a window never holds more than limit − 1 + C × M.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  admissionRequests,
  admissionResults,
  chargeRequests,
  postCharges,
  reportedCost,
  requestCost,
} from '../../src/limits/charging.js';
import { planWindows } from '../../src/limits/plan.js';
import type { Charging } from '../../src/rules/model.js';
import { loadConfigText } from '../../src/rules/load.js';
import { MemoryStore } from '../../src/store/memory-store.js';

const bytesCost: Charging = {
  cost: { perBytes: 1024 },
  afterHeader: undefined,
  afterMax: 0,
  countOnly: undefined,
  deferred: false,
};

describe('a request cost', () => {
  test("from the body's declared size, rounded up, at least 1; unknown sizes have none", () => {
    const cost = (headers: Record<string, string>, httpVersionMajor = 1, method = 'POST') =>
      requestCost(bytesCost, { headers, httpVersionMajor, method });
    expect(cost({ 'content-length': '0' })).toBe(1);
    expect(cost({ 'content-length': '1024' })).toBe(1);
    expect(cost({ 'content-length': '1025' })).toBe(2);
    expect(cost({})).toBe(1); // HTTP/1.1 without either header: no body
    expect(cost({ 'transfer-encoding': 'chunked' })).toBeUndefined();
    expect(cost({}, 2)).toBeUndefined(); // an HTTP/2 POST may stream a body of any size
    expect(cost({}, 2, 'GET')).toBe(1);
    expect(requestCost({ ...bytesCost, cost: 7 }, { headers: {} })).toBe(7);
  });

  test('a reported cost: digits only, clamped to max', () => {
    expect(reportedCost('12', 50)).toEqual({ cost: 12 });
    expect(reportedCost(' 0 ', 50)).toEqual({ cost: 0 });
    expect(reportedCost('51', 50)).toEqual({ cost: 50, problem: 'clamped' });
    expect(reportedCost('9'.repeat(15), 50)).toEqual({ cost: 50, problem: 'clamped' });
    expect(reportedCost(undefined, 50)).toEqual({ cost: 0, problem: 'missing' });
    for (const bad of ['-1', '1.5', '1e3', '0x10', '', 'ten', '9'.repeat(16)])
      expect(reportedCost(bad, 50)).toEqual({ cost: 0, problem: 'invalid' });
    expect(reportedCost(['1', '2'], 50)).toEqual({ cost: 0, problem: 'invalid' });
  });
});

const route = (limit: number, max: number, algorithm: string) =>
  loadConfigText(
    `
listeners: [{ host: 127.0.0.1, port: 0 }]
upstreams: { app: { url: "http://127.0.0.1:9" } }
limiters:
  llm: { chargeAfter: { header: X-Cost, max: ${max} }, windows: [{ limit: ${limit}, period: 1h, algorithm: ${algorithm}, key: [ip] }] }
routes: [{ name: r, paths: ["/*"], upstream: app, limiters: [llm] }]
`,
    't.yaml',
    {},
  ).routes[0]!;

type Op = { kind: 'admit' } | { kind: 'answer'; pick: number; reported: number };
const opArb = (max: number) =>
  fc.oneof(
    fc.constant<Op>({ kind: 'admit' }),
    fc.record({
      kind: fc.constant('answer' as const),
      pick: fc.nat(),
      reported: fc.integer({ min: 0, max: 2 * max }),
    }),
  );

describe('post-charges', () => {
  test('admitted while the window has room for one, charged in full; bounded by limit − 1 + C × max', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 30 }),
        fc.constantFrom('fixed', 'sliding'),
        fc.array(opArb(30), { maxLength: 60 }),
        async (limit, max, algorithm, ops) => {
          const r = route(limit, max, algorithm);
          const now = Date.UTC(2026, 0, 1, 0, 10); // no window boundary is crossed
          const store = new MemoryStore({ maxKeys: 100, sweepIntervalMs: 60_000, now: () => now });
          const planned = planWindows(r.windows, () => 'k', '', now);
          const costs = [1];
          let modelCount = 0;
          let inFlight = 0;
          let mostInFlight = 0;
          try {
            for (const op of ops) {
              if (op.kind === 'admit') {
                const raw = await store.hit(admissionRequests(r.windows, planned, costs));
                const [result] = admissionResults(r.windows, costs, raw);
                expect(result!.allowed).toBe(modelCount <= limit - 1);
                expect(result!.limit).toBe(limit);
                expect(result!.count).toBe(modelCount);
                if (result!.allowed) mostInFlight = Math.max(mostInFlight, ++inFlight);
              } else if (inFlight > 0) {
                inFlight--;
                const { charges } = postCharges(r.windows, costs, 200, { 'x-cost': String(op.reported) });
                const requests = chargeRequests(planned, charges);
                if (requests.length > 0) await store.hit(requests);
                modelCount += Math.min(op.reported, max);
              }
              expect(modelCount).toBeLessThanOrEqual(mostInFlight === 0 ? 0 : limit - 1 + mostInFlight * max);
            }
          } finally {
            await store.close();
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  test('countOnly charges only the listed statuses; limiters without charging are not post-charged', () => {
    const table = loadConfigText(
      `
listeners: [{ host: 127.0.0.1, port: 0 }]
upstreams: { app: { url: "http://127.0.0.1:9" } }
limiters:
  logins: { countOnly: [401, 403], cost: 2, windows: [{ limit: 5, period: 1h, key: [ip] }] }
  all: { windows: [{ limit: 100, period: 1h, key: [ip] }] }
routes: [{ name: r, paths: ["/*"], upstream: app, limiters: [logins, all] }]
`,
      't.yaml',
      {},
    );
    const windows = table.routes[0]!.windows;
    expect(postCharges(windows, [2, 1], 401, {}).charges).toEqual([2, 0]);
    expect(postCharges(windows, [2, 1], 200, {}).charges).toEqual([0, 0]);
    const planned = planWindows(windows, () => 'k', '');
    // Checked for room for its cost (limit 5 − 2, nothing counted); the other window counted at once.
    expect(
      admissionRequests(windows, planned, [2, 1]).map((w) => [w.limit, w.cost, w.cacheWhenSpent]),
    ).toEqual([
      [3, 0, false],
      [100, undefined, true],
    ]);
    expect(chargeRequests(planned, [2, 0])).toEqual([
      { ...planned[0], enforce: false, cacheWhenSpent: false, cost: 2 },
    ]);
  });
});
