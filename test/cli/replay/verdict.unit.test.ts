// Replay's verdict against the gateway's decide: refused, shadow-refused or allowed, for any
// windows (enforced or shadow) and any results.
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { verdict } from '../../../src/cli/replay/verdict.js';
import { decide } from '../../../src/limits/decision.js';
import type { RouteWindow } from '../../../src/rules/model.js';
import type { WindowResult } from '../../../src/store/window-store.js';

const windowArb = fc
  .boolean()
  .map(
    (shadow) => ({ limiter: { name: 'l', shadow }, index: 0, policyName: 'l.0' }) as unknown as RouteWindow,
  );
const resultArb: fc.Arbitrary<WindowResult> = fc.record(
  {
    count: fc.integer({ min: 0, max: 10 }),
    limit: fc.integer({ min: 1, max: 10 }),
    resetAtMs: fc.integer({ min: 0, max: 10_000 }),
    allowed: fc.boolean(),
    retryAtMs: fc.integer({ min: 0, max: 10_000 }),
  },
  { requiredKeys: ['count', 'limit', 'resetAtMs', 'allowed'] },
);

test('verdict is decide(…).allowed, and when allowed its shadowLimited', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(windowArb, resultArb), { maxLength: 6 }),
      fc.integer({ min: 0, max: 10_000 }),
      (pairs, now) => {
        const windows = pairs.map(([w]) => w);
        const results = pairs.map(([, r]) => r);
        const d = decide(windows, results, now);
        const expected = !d.allowed ? 'refused' : d.shadowLimited ? 'shadow-refused' : 'allowed';
        expect(verdict(windows, results)).toBe(expected);
      },
    ),
    { numRuns: 5_000 },
  );
});
