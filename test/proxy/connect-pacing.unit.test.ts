import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ConnectPacer } from '../../src/proxy/connect-pacing.js';

describe('ConnectPacer', () => {
  test('a burst at once, then one per interval', () => {
    const pacer = new ConnectPacer(3, 10); // 3 at once, then one per 100 ms
    expect([0, 0, 0, 0, 0].map(() => pacer.reserve(1000))).toEqual([0, 0, 0, 100, 200]);
  });

  test('an idle pacer refills to its burst, never beyond', () => {
    const pacer = new ConnectPacer(2, 10);
    expect([pacer.reserve(0), pacer.reserve(0), pacer.reserve(0)]).toEqual([0, 0, 100]);
    expect([pacer.reserve(10_000), pacer.reserve(10_000), pacer.reserve(10_000)]).toEqual([0, 0, 100]);
  });

  test('property: connects started by time t never exceed burst + rate x t', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 200 }),
        fc.array(fc.integer({ min: 0, max: 500 }), { minLength: 1, maxLength: 300 }),
        (burst, perSecond, gaps) => {
          const pacer = new ConnectPacer(burst, perSecond);
          let now = 0;
          const starts: number[] = [];
          for (const gap of gaps) {
            now += gap;
            starts.push(now + pacer.reserve(now));
          }
          const last = Math.max(...starts);
          for (const t of [last, ...starts]) {
            const started = starts.filter((s) => s <= t).length;
            expect(started).toBeLessThanOrEqual(burst + Math.floor((t * perSecond) / 1000) + 1);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
