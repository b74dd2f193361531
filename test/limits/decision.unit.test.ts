import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { RouteWindow } from '../../src/rules/compile.js';
import { decide, resetSeconds, retryAfterSeconds } from '../../src/limits/decision.js';
import type { WindowResult } from '../../src/store/window-store.js';

const limiter = (shadow: boolean): RouteWindow => ({
  limiter: {
    name: shadow ? 'shadow' : 'enforced',
    message: 'm',
    shadow,
    overLimitCache: true,
    onStoreError: 'open',
    windows: [],
    tagPart: 'ip',
    descriptors: [],
  },
  index: 0,
  window: {
    limit: 1,
    periodMs: 1000,
    algorithm: 'fixed',
    burst: 1,
    parts: ['ip'],
    keyStem: ':x:1000:ip',
    otherParts: [],
  },
  policyName: shadow ? 'shadow.0' : 'enforced.0',
});

const NOW = 1_800_000_000_000;
const windowResult = fc
  .record({
    limit: fc.integer({ min: 1, max: 1000 }),
    used: fc.integer({ min: 0, max: 1200 }),
    ttl: fc.integer({ min: 1, max: 3_600_000 }),
  })
  .map(({ limit, used, ttl }): WindowResult => ({
    limit,
    count: used,
    resetAtMs: NOW + ttl,
    allowed: used <= limit,
  }));

describe('decide', () => {
  test('refuses exactly when an enforced window is spent; reports the right window', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(windowResult, fc.boolean()), { minLength: 1, maxLength: 6 }), (cases) => {
        const results = cases.map(([r]) => r);
        const owners = cases.map(([, shadow]) => limiter(shadow));
        const d = decide(owners, results, NOW);
        const enforced = results.filter((_, i) => !owners[i]!.limiter.shadow);
        const spent = enforced.filter((r) => !r.allowed);
        expect(d.allowed).toBe(spent.length === 0);
        expect(d.shadowLimited).toBe(results.some((r, i) => owners[i]!.limiter.shadow && !r.allowed));
        if (enforced.length === 0) {
          expect(d.report).toBeUndefined();
        } else if (spent.length > 0) {
          const lastReset = Math.max(...spent.map((r) => r.resetAtMs));
          expect(d.report?.remaining).toBe(0);
          expect(d.report?.resetSec).toBe(Math.ceil(lastReset / 1000));
          expect(d.retryAfterSec).toBe(Math.max(1, Math.ceil((lastReset - NOW) / 1000)));
        } else {
          const lowest = Math.min(...enforced.map((r) => Math.max(0, r.limit - r.count)));
          expect(d.report?.remaining).toBe(lowest);
          expect(d.retryAfterSec).toBeUndefined();
        }
      }),
    );
  });

  test('a tie in remaining reports the window that resets last', () => {
    const results: WindowResult[] = [
      { limit: 10, count: 5, resetAtMs: NOW + 60_000, allowed: true },
      { limit: 100, count: 95, resetAtMs: NOW + 3_600_000, allowed: true },
    ];
    expect(decide([limiter(false), limiter(false)], results, NOW).report).toEqual({
      limit: 100,
      remaining: 5,
      resetSec: Math.ceil((NOW + 3_600_000) / 1000),
      resetInSec: 3600,
      policyName: 'enforced.0',
    });
  });
});

describe('window maths', () => {
  test('Retry-After is whole seconds, at least 1, and never before the reset', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2e12 }),
        fc.integer({ min: -5000, max: 86_400_000 }),
        (now, ttl) => {
          const s = retryAfterSeconds(now + ttl, now);
          expect(Number.isInteger(s)).toBe(true);
          expect(s).toBeGreaterThanOrEqual(1);
          expect(now + s * 1000).toBeGreaterThanOrEqual(now + ttl);
          if (ttl <= 0) expect(s).toBe(1);
          else expect(s * 1000 - ttl).toBeLessThan(1000); // no more than needed
        },
      ),
    );
  });

  test('X-RateLimit-Reset is the reset rounded up to the second', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2e12 }), (ms) => {
        const s = resetSeconds(ms);
        expect(s * 1000).toBeGreaterThanOrEqual(ms);
        expect(s * 1000 - ms).toBeLessThan(1000);
      }),
    );
  });
});
