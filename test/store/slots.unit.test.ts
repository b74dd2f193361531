import calculateSlot from 'cluster-key-slot';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { compileLimiter } from '../../src/rules/compile.js';
import type { KeyPart } from '../../src/config/schema.js';
import { hashPart } from '../../src/identity/hash.js';
import { windowKey } from '../../src/limits/plan.js';
import { groupBySlot } from '../../src/store/redis-cluster-store.js';

const keys = (...k: string[]) => k.map((key) => ({ key }));

describe('groupBySlot', () => {
  test('keys with one hash tag form one group; groups keep the order of first appearance', () => {
    // {a} and {b} hash to different slots (15495 and 3300).
    expect(calculateSlot('{a}')).not.toBe(calculateSlot('{b}'));
    expect(groupBySlot(keys('x{b}:1', '{a}:1', 'y{b}:2', '{a}:2', '{a}:3'))).toEqual([
      [0, 2],
      [1, 3, 4],
    ]);
    expect(groupBySlot(keys('{a}:only'))).toEqual([[0]]);
    expect(groupBySlot([])).toEqual([]);
  });

  test('every index once, one slot per group, a different slot per group, in request order', () => {
    const key = fc.tuple(fc.constantFrom('', '{t1}', '{t2}', '{t3}', '{}'), fc.string({ maxLength: 6 }));
    fc.assert(
      fc.property(fc.array(key, { maxLength: 30 }), (parts) => {
        const requests = parts.map(([tag, rest]) => ({ key: `tg:${tag}:${rest}` }));
        const groups = groupBySlot(requests);
        expect(groups.flat().sort((a, b) => a - b)).toEqual(requests.map((_, i) => i));
        const slots = groups.map((g) => new Set(g.map((i) => calculateSlot(requests[i]!.key))));
        for (const s of slots) expect(s.size).toBe(1);
        expect(new Set(slots.map((s) => [...s][0])).size).toBe(groups.length);
        for (const g of groups) expect(g).toEqual([...g].sort((a, b) => a - b));
        const firsts = groups.map((g) => g[0]!);
        expect(firsts).toEqual([...firsts].sort((a, b) => a - b));
      }),
    );
  });

  test("each limiter's windows fall in one group, whatever the request's values", () => {
    const limiter = (name: string, windows: KeyPart[][]) =>
      compileLimiter(
        name,
        {
          message: 'm',
          shadow: false,
          overLimitCache: true,
          windows: windows.map((key, i) => ({ limit: 10, period: 60_000 * (i + 1), key })),
        },
        'open',
      );
    const limiters = [
      limiter('widget-init', [['ip', 'user_agent'], ['ip']]),
      limiter('per-agent', [['user_agent'], ['user_agent', 'header:X-Site']]),
      limiter('no-shared-part', [['ip'], ['user_agent']]),
    ];
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), (ip, ua, site) => {
        const values = (p: KeyPart) =>
          hashPart(p === 'ip' ? `ip=${ip}` : p === 'user_agent' ? `ua=${ua}` : site);
        // The windows of a request, limiter after limiter, as the plan lists them.
        const owners = limiters.flatMap((l) => l.windows.map((_, i) => ({ l, i })));
        const groups = groupBySlot(owners.map(({ l, i }) => ({ key: windowKey('tg:', l, i, values) })));
        expect(groups.length).toBeLessThanOrEqual(limiters.length);
        for (const l of limiters) {
          const mine = owners.flatMap((o, i) => (o.l === l ? [i] : []));
          expect(groups.filter((g) => g.some((i) => mine.includes(i)))).toEqual([
            expect.arrayContaining(mine),
          ]);
        }
      }),
      { numRuns: 50 },
    );
  });
});
