import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
// @ts-expect-error: the bench is plain JavaScript
import { formatSpread, spreadOf, spreadVerdict } from '../../bench/lib/repeats.js';

interface Spread {
  median: number;
  low: number;
  high: number;
  n: number;
}
const spread = spreadOf as (values: (number | undefined)[]) => Spread | undefined;
const verdict = spreadVerdict as (min: number | undefined, s: Spread | undefined) => string;
const format = formatSpread as (s: Spread | undefined, digits?: number, suffix?: string) => string;

describe('BENCH_REPEAT spreads', () => {
  test('median, lowest and highest of the measured repeats; unmeasured ones are left out', () => {
    expect(spread([0.9, undefined, 0.8, 1.1])).toEqual({ median: 0.9, low: 0.8, high: 1.1, n: 3 });
    expect(spread([0.8, 1.0])).toEqual({ median: 0.9, low: 0.8, high: 1.0, n: 2 });
    expect(spread([undefined])).toBeUndefined();
    expect(format(spread([0.9, 0.8, 1.1]))).toBe('0.90× (0.80–1.10)');
    expect(format(undefined)).toBe('n/a');
    expect(format(spread([39.31, 41.04, 38.12]), 1, '')).toBe('39.3 (38.1–41.0)');
  });

  test('the median lies between the lowest and the highest, whatever the order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.01, max: 10, noNaN: true }), { minLength: 1, maxLength: 9 }),
        (v) => {
          const s = spread(v)!;
          expect(s.low).toBe(Math.min(...v));
          expect(s.high).toBe(Math.max(...v));
          expect(s.median).toBeGreaterThanOrEqual(s.low);
          expect(s.median).toBeLessThanOrEqual(s.high);
          expect(spread([...v].reverse())).toEqual(s);
        },
      ),
    );
  });

  test('a target is met only when every repeat meets it, and missed only when none does', () => {
    expect(verdict(0.9, spread([0.91, 0.95]))).toBe('MET');
    expect(verdict(0.9, spread([0.8, 0.89]))).toBe('NOT MET');
    expect(verdict(0.9, spread([0.85, 0.95]))).toBe('within the spread');
    expect(verdict(undefined, spread([1]))).toBe('(no target)');
    expect(verdict(0.9, undefined)).toBe('not measured');
  });
});
