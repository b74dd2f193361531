// The workers primary's operator view: several processes' views summed exactly (decisions, usage,
// near-limit, store round trips), heaviest keys merged by key and cut to TOP_KEYS, refusals
// interleaved newest first, a not-ready store reported, the newest reload kept.
import { expect, test } from 'vitest';
import { mergeOperatorViews } from '../../src/runtime/admin-operator-cluster.js';
import type { OperatorView } from '../../src/runtime/admin-operator.js';
import { TOP_KEYS } from '../../src/metrics/near-limit.js';

const usage = (a: number, b: number, c: number, r: number) => ({
  '0-50': a,
  '50-80': b,
  '80-100': c,
  refused: r,
});

/** One process's view of limiter `api`: what is not given is zero or empty. */
function view(given: {
  decisions?: Record<string, number>;
  usage?: ReturnType<typeof usage>;
  near?: number;
  top?: [string, number, number][];
  refusals?: string[];
  ready?: boolean;
  reload?: string;
  version?: string;
  latency?: [number, number, number];
}): OperatorView {
  const over = {
    decisions: {},
    usage: usage(0, 0, 0, 0),
    near: 0,
    top: [],
    refusals: [],
    latency: [0, 0, 0] as const,
    ...given,
  };
  return {
    now: '2026-11-26T07:00:00.000Z',
    config: {
      version: over.version ?? 'abc',
      lastReload: over.reload
        ? {
            at: over.reload,
            changes: {
              limiters: { added: [], removed: [], changed: [] },
              routes: { added: [], removed: [], changed: [] },
            },
          }
        : null,
    },
    store: {
      ...(over.ready === false ? { ready: false as const, reason: 'redis away' } : { ready: true as const }),
      errors: over.ready === false ? 3 : 0,
      latency: {
        buckets: [
          { le: 0.001, count: over.latency[0] },
          { le: '+Inf', count: over.latency[1] },
        ],
        count: over.latency[1],
        sum: over.latency[2],
      },
    },
    limiters: [
      {
        name: 'api',
        shadow: false,
        decisions: over.decisions,
        windows: [{ window: '1m', limit: 10, algorithm: 'fixed', usage: over.usage, nearLimit: over.near }],
        top: over.top.map(([key, count, error]) => ({ key, count, error })),
        keyParts: 'hidden: log.keyParts is off',
      },
    ],
    refusals: over.refusals.map((at) => ({ at, route: 'r', limiter: 'api', decision: 'limited' })),
  } as OperatorView;
}

test('two views: every count summed, keys merged, refusals newest first', () => {
  const a = view({
    decisions: { allowed: 5, limited: 1 },
    usage: usage(3, 1, 1, 1),
    near: 1,
    top: [
      [':k1:', 4, 0],
      [':k2:', 2, 0],
    ],
    refusals: ['2026-11-26T07:00:03.000Z', '2026-11-26T07:00:01.000Z'],
    latency: [5, 6, 0.004],
    reload: '2026-11-26T06:00:00.000Z',
  });
  const b = view({
    decisions: { allowed: 2, exempt: 4 },
    usage: usage(2, 0, 0, 0),
    near: 0,
    top: [
      [':k2:', 3, 1],
      [':k3:', 1, 0],
    ],
    refusals: ['2026-11-26T07:00:02.000Z'],
    latency: [1, 2, 0.003],
    ready: false,
    reload: '2026-11-26T06:30:00.000Z',
  });
  const merged = mergeOperatorViews([a, b]);
  expect(merged.limiters).toEqual([
    {
      name: 'api',
      shadow: false,
      decisions: { allowed: 7, limited: 1, exempt: 4 },
      windows: [{ window: '1m', limit: 10, algorithm: 'fixed', usage: usage(5, 1, 1, 1), nearLimit: 1 }],
      top: [
        { key: ':k2:', count: 5, error: 1 },
        { key: ':k1:', count: 4, error: 0 },
        { key: ':k3:', count: 1, error: 0 },
      ],
      keyParts: 'hidden: log.keyParts is off',
    },
  ]);
  expect(merged.refusals.map((r) => r.at)).toEqual([
    '2026-11-26T07:00:03.000Z',
    '2026-11-26T07:00:02.000Z',
    '2026-11-26T07:00:01.000Z',
  ]);
  expect(merged.store).toEqual({
    ready: false,
    reason: 'redis away',
    errors: 3,
    latency: {
      buckets: [
        { le: 0.001, count: 6 },
        { le: '+Inf', count: 8 },
      ],
      count: 8,
      sum: 0.007,
    },
  });
  expect(merged.config.lastReload?.at).toBe('2026-11-26T06:30:00.000Z');
  expect(merged.config.version).toBe('abc');
});

test('the heaviest keys are cut to TOP_KEYS after summing', () => {
  const keys = (from: number, n: number): [string, number, number][] =>
    Array.from({ length: n }, (_, i) => [`:k${from + i}:`, 100 - from - i, 0]);
  const merged = mergeOperatorViews([view({ top: keys(0, TOP_KEYS) }), view({ top: keys(10, TOP_KEYS) })]);
  const top = merged.limiters[0]!.top;
  expect(top).toHaveLength(TOP_KEYS);
  // :k10: … :k19: are in both: counted twice, so they lead.
  expect(top.slice(0, 3)).toEqual([
    { key: ':k10:', count: 180, error: 0 },
    { key: ':k11:', count: 178, error: 0 },
    { key: ':k12:', count: 176, error: 0 },
  ]);
  expect(top.at(-1)).toEqual({ key: ':k9:', count: 91, error: 0 });
});
