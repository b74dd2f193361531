// The lease maths alone (src/limits/window-maths/lease.ts), in a model of several instances
// leasing from one store counter: random interleavings of hits, grants, give-backs and window
// ends never admit more than the limit, and refuse only within the documented bound.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { leaseSlice, MIN_SLICE, underAdmissionBound } from '../../src/limits/window-maths/lease.js';

/** What a give-back subtracts in the store (RETURN_LUA): the unspent part, never more than the count holds. */
const giveBackAmount = (unspent: number, count: number): number => Math.max(0, Math.min(unspent, count));

describe('leaseSlice', () => {
  test('examples', () => {
    expect(leaseSlice(10_000_000, 4, 1000)).toBe(1000);
    expect(leaseSlice(4000, 4, 1000)).toBe(1000);
    expect(leaseSlice(3999, 4, 1000)).toBe(999);
    expect(leaseSlice(100, 8, 1000)).toBe(12);
    expect(leaseSlice(15, 8, 1000)).toBe(0); // a slice of 1: counted exactly
    expect(leaseSlice(16, 8, 1000)).toBe(2);
    expect(leaseSlice(16, 8, 1000, 3)).toBe(0); // the asking request costs 3
    expect(leaseSlice(-5, 1, 1000)).toBe(0);
  });

  test('a slice is 0 or between max(2, need) and max, and at most remaining ÷ divisor', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -10, max: 10_000_000 }),
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 1, max: 10 }),
        (remaining, divisor, max, need) => {
          const s = leaseSlice(remaining, divisor, max, need);
          if (s === 0) return;
          expect(s).toBeGreaterThanOrEqual(Math.max(MIN_SLICE, need));
          expect(s).toBeLessThanOrEqual(max);
          expect(s * divisor).toBeLessThanOrEqual(remaining);
        },
      ),
    );
  });

  test('slices shrink as the remaining budget shrinks', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 2, max: 5000 }),
        (a, b, divisor, max) => {
          const [lo, hi] = a < b ? [a, b] : [b, a];
          expect(leaseSlice(lo, divisor, max)).toBeLessThanOrEqual(leaseSlice(hi, divisor, max));
        },
      ),
    );
  });
});

/** One instance of the model: what it holds of the window's budget. */
interface Instance {
  left: number;
}

const stepArb = (instances: number) =>
  fc.oneof(
    {
      weight: 12,
      arbitrary: fc.record({
        kind: fc.constant('hit' as const),
        at: fc.nat(instances - 1),
        cost: fc.integer({ min: 1, max: 4 }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant('giveBack' as const), at: fc.nat(instances - 1) }),
    },
    { weight: 1, arbitrary: fc.constant({ kind: 'windowEnd' as const }) },
  );

describe('the lease protocol in a model of several instances', () => {
  test('never over the limit; a refusal only when admitted + unspent + cost > limit; unspent within the bound', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }).chain((n) =>
          fc.record({
            n: fc.constant(n),
            limit: fc.integer({ min: 1, max: 300 }),
            max: fc.integer({ min: 2, max: 40 }),
            spread: fc.integer({ min: 1, max: 4 }),
            steps: fc.array(stepArb(n), { maxLength: 200 }),
          }),
        ),
        ({ n, limit, max, spread, steps }) => {
          const instances: Instance[] = Array.from({ length: n }, () => ({ left: 0 }));
          let count = 0; // the store's counter: admitted + every slice granted, less what came back
          let admitted = 0;
          const unspent = () => instances.reduce((sum, i) => sum + i.left, 0);
          for (const step of steps) {
            if (step.kind === 'windowEnd') {
              // The window resets: the store forgets it, the slices are lost with it.
              count = 0;
              admitted = 0;
              for (const i of instances) i.left = 0;
              continue;
            }
            const inst = instances[step.at]!;
            if (step.kind === 'giveBack') {
              const back = giveBackAmount(inst.left, count);
              count -= back;
              inst.left -= back;
              continue;
            }
            const { cost } = step;
            if (inst.left < cost) {
              // A lease, counted by the store when granted.
              const slice = leaseSlice(limit - count, spread * n, max, cost);
              count += slice;
              inst.left += slice;
            }
            if (inst.left >= cost) {
              inst.left -= cost;
              admitted += cost;
            } else if (count + cost <= limit) {
              count += cost; // counted exactly
              admitted += cost;
            } else {
              expect(admitted + unspent() + cost).toBeGreaterThan(limit);
            }
            expect(admitted).toBeLessThanOrEqual(limit);
            expect(count).toBe(admitted + unspent());
            expect(unspent()).toBeLessThanOrEqual(underAdmissionBound(n, max, 4));
          }
          // Every instance stops: the store keeps exactly what was admitted.
          for (const i of instances) {
            const back = giveBackAmount(i.left, count);
            count -= back;
            i.left -= back;
          }
          expect(count).toBe(admitted);
        },
      ),
      { numRuns: 300 },
    );
  });
});
