import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ResetBudget } from '../../../src/runtime/tls/reset-budget.js';

describe('ResetBudget (HTTP/2 rapid-reset guard)', () => {
  test('a burst is allowed, the next reset at the same instant is not', () => {
    const budget = new ResetBudget(3, 1, 0);
    expect([budget.spend(0), budget.spend(0), budget.spend(0), budget.spend(0)]).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });

  test('refills at the rate, never above the burst', () => {
    const budget = new ResetBudget(2, 10, 0);
    budget.spend(0);
    budget.spend(0);
    expect(budget.spend(50)).toBe(false); // half a token
    expect(budget.spend(100)).toBe(true); // 0.5 + 0.5 = 1
    expect([budget.spend(60_000), budget.spend(60_000), budget.spend(60_000)]).toEqual([true, true, false]);
  });

  test('property: over any schedule, allowed resets ≤ burst + rate × elapsed', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 100 }),
        fc.array(fc.integer({ min: 0, max: 200 }), { maxLength: 300 }),
        (burst, rate, gaps) => {
          const budget = new ResetBudget(burst, rate, 0);
          let now = 0;
          let allowed = 0;
          for (const gap of gaps) {
            now += gap;
            if (budget.spend(now)) allowed++;
          }
          expect(allowed).toBeLessThanOrEqual(burst + Math.floor((rate * now) / 1000));
        },
      ),
    );
  });
});
