import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, test } from 'vitest';
import {
  LIMITERS_TRACKED,
  NearLimit,
  periodLabel,
  RECENT_REFUSALS,
  TOP_KEYS,
  usageBucket,
  USAGE_BUCKETS,
} from '../../src/metrics/near-limit.js';

const win = (name: string, index = 0, periodMs = 60_000) => ({
  limiter: { name },
  index,
  window: { periodMs },
});

describe('usageBucket', () => {
  test('the boundaries: 50 % and 80 % fall in the lower bucket; a refusal is refused whatever its count', () => {
    expect([1, 5, 6, 8, 9, 10].map((n) => USAGE_BUCKETS[usageBucket(n, 10, true)])).toEqual([
      '0-50',
      '0-50',
      '50-80',
      '50-80',
      '80-100',
      '80-100',
    ]);
    expect(USAGE_BUCKETS[usageBucket(0, 10, false)]).toBe('refused');
    expect(USAGE_BUCKETS[usageBucket(0, 0, true)]).toBe('80-100');
  });

  test('against the fraction, exactly', () => {
    fc.assert(
      fc.property(fc.nat(1000), fc.integer({ min: 1, max: 1000 }), fc.boolean(), (count, limit, allowed) => {
        // Per cent, in whole numbers.
        const expected = !allowed ? 3 : count * 100 <= limit * 50 ? 0 : count * 100 <= limit * 80 ? 1 : 2;
        expect(usageBucket(count, limit, allowed)).toBe(expected);
      }),
    );
  });
});

describe('NearLimit', () => {
  test('counts usage per limiter and window, the heaviest keys, and the refusal with its key', async () => {
    const registry = new Registry();
    const n = new NearLimit(registry);
    const windows = [win('api', 0, 60_000), win('api', 1, 3_600_000)];
    const keys = [{ key: 'k:a:m' }, { key: 'k:a:h' }];
    n.observe(
      'r',
      windows,
      keys,
      [
        { count: 9, limit: 10, allowed: true },
        { count: 9, limit: 100, allowed: true },
      ],
      undefined,
    );
    n.observe(
      'r',
      windows,
      keys,
      [
        { count: 10, limit: 10, allowed: false },
        { count: 9, limit: 100, allowed: true },
      ],
      windows[0]!.limiter,
    );
    expect(n.limiter('api')).toEqual({
      windows: [
        { window: '1m', usage: { '0-50': 0, '50-80': 0, '80-100': 1, refused: 1 }, nearLimit: 1 },
        { window: '1h', usage: { '0-50': 2, '50-80': 0, '80-100': 0, refused: 0 }, nearLimit: 0 },
      ],
      top: [{ key: 'k:a:m', count: 2, error: 0 }],
      total: 2,
    });
    expect(n.recentRefusals()).toEqual([
      { at: expect.any(String), route: 'r', limiter: 'api', decision: 'limited', key: 'k:a:m' },
    ]);
    const text = await registry.metrics();
    expect(text).toContain('tollgate_limit_usage_total{limiter="api",window="1m",bucket="80-100"} 1');
    expect(text).toContain('tollgate_limit_usage_total{limiter="api",window="1m",bucket="refused"} 1');
    expect(text).toContain('tollgate_limit_usage_total{limiter="api",window="1h",bucket="0-50"} 2');
    expect(text).toContain('tollgate_near_limit_total{limiter="api",window="1m"} 1');
    expect(n.limiter('other')).toBeUndefined();
  });

  test('stays bounded: refusals, keys per limiter, limiters tracked', () => {
    const n = new NearLimit(new Registry());
    for (let i = 0; i < RECENT_REFUSALS + 7; i++) n.refusal('r', 'api', 'unauthorized');
    expect(n.recentRefusals()).toHaveLength(RECENT_REFUSALS);
    n.refusal('last', 'api', 'banned');
    expect(n.recentRefusals()[0]).toMatchObject({ route: 'last', decision: 'banned' });
    const w = win('api');
    for (let i = 0; i < TOP_KEYS * 3; i++)
      n.observe('r', [w], [{ key: `k${i}` }], [{ count: 1, limit: 5, allowed: true }], undefined);
    expect(n.limiter('api')!.top).toHaveLength(TOP_KEYS);
    for (let i = 0; i < LIMITERS_TRACKED + 5; i++) {
      n.observe('r', [win(`l${i}`)], [{ key: 'k' }], [{ count: 1, limit: 5, allowed: true }], undefined);
    }
    expect(n.limiter(`l${LIMITERS_TRACKED - 2}`)).toBeDefined();
    expect(n.limiter(`l${LIMITERS_TRACKED + 4}`)).toBeUndefined();
  });

  test('periodLabel writes a period as configured', () => {
    expect([1000, 60_000, 90_000, 3_600_000, 86_400_000, 1500].map(periodLabel)).toEqual([
      '1s',
      '1m',
      '90s',
      '1h',
      '1d',
      '1500ms',
    ]);
  });
});
