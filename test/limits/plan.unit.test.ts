import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { compileLimiter, compileRoute, type CompiledLimiter } from '../../src/rules/compile.js';
import { hashPart } from '../../src/identity/hash.js';
import { planWindows, windowKey } from '../../src/limits/plan.js';
import { builtKeysHeld } from '../../src/limits/keys.js';

const widgetInit = compileLimiter(
  'widget-init',
  {
    message: 'm',
    shadow: false,
    overLimitCache: true,
    windows: [
      { limit: 1000, period: 60_000, key: ['ip', 'user_agent'] },
      { limit: 30_000, period: 3_600_000, key: ['ip'] },
    ],
  },
  'open',
);

const routeWindows = (limiters: CompiledLimiter[]) =>
  compileRoute(
    { name: 'r', hosts: ['*'], methods: ['*'], paths: ['/*'], upstream: 'u', limiters: [], stream: false },
    limiters,
  ).windows;

describe('window keys', () => {
  test('raw user agents, tokens and addresses never appear in store keys', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 4 }), fc.string({ minLength: 4 }), (ua, ip) => {
        const values = (p: string) => hashPart(p === 'ip' ? `ip=${ip}` : `ua=${ua}`);
        const requests = planWindows(routeWindows([widgetInit]), values, 'tg:');
        for (const r of requests) {
          expect(r.key).not.toContain(ua);
          expect(r.key).not.toContain(ip);
        }
      }),
    );
  });

  test("a limiter's windows share one hash tag (one Redis Cluster slot), on the part they share", () => {
    expect(widgetInit.tagPart).toBe('ip');
    const values = (p: string) => (p === 'ip' ? 'IPHASH' : 'UAHASH');
    expect(windowKey('tg:', widgetInit, 0, values)).toBe(
      'tg:{IPHASH}:widget-init:60000:ip+user_agent:UAHASH',
    );
    expect(windowKey('tg:', widgetInit, 1, values)).toBe('tg:{IPHASH}:widget-init:3600000:ip');
  });

  test('distinct part values give distinct keys, and the limit is not part of the key', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.integer({ min: 1, max: 1e6 }), (a, b, limit) => {
        fc.pre(a !== b);
        const l = compileLimiter(
          'x',
          {
            message: '',
            shadow: false,
            overLimitCache: true,
            windows: [{ limit, period: 1000, key: ['jwt'] }],
          },
          'open',
        );
        const key = (v: string) => windowKey('', l, 0, () => hashPart(v));
        expect(key(a)).not.toBe(key(b));
        expect(key(a)).not.toContain(String(limit) + ':');
      }),
    );
  });

  test('property: a one-part window key is the same string, built or reused, across prefixes and past the cache bound', () => {
    // widget-init's second window is keyed by ip alone: its key comes from the cache of built keys.
    const plain = (prefix: string, tag: string) => `${prefix}{${tag}}${widgetInit.windows[1]!.keyStem}`;
    const tags = fc.oneof(fc.constantFrom('a', 'b', 'c'), fc.string({ maxLength: 12 }));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('tg:', 'other:', ''), tags), { minLength: 1, maxLength: 60 }),
        (hits) => {
          for (const [prefix, tag] of hits)
            expect(windowKey(prefix, widgetInit, 1, () => tag)).toBe(plain(prefix, tag));
        },
      ),
    );
    // More distinct tags than one stem keeps: every key still exact, old ones rebuilt as needed.
    for (let i = 0; i < 9000; i++)
      expect(windowKey('tg:', widgetInit, 1, () => `t${i % 4500}`)).toBe(plain('tg:', `t${i % 4500}`));
  });

  test('the built-key cache stays bounded when reloads keep renaming limiters', () => {
    // Each round is a reload that renames the limiter: a new stem, whose old one no window uses.
    for (let round = 0; round < 600; round++) {
      const renamed = compileLimiter(
        `renamed-${round}`,
        {
          message: '',
          shadow: false,
          overLimitCache: true,
          windows: [{ limit: 5, period: 1000, key: ['ip'] }],
        },
        'open',
      );
      for (let i = 0; i < 40; i++) {
        expect(windowKey('tg:', renamed, 0, () => `c${i}`)).toBe(`tg:{c${i}}${renamed.windows[0]!.keyStem}`);
      }
    }
    // 600 stems of 40 keys each were built; at most 256 stems are held.
    expect(builtKeysHeld()).toBeLessThanOrEqual(256 * 40);
    expect(builtKeysHeld()).toBeGreaterThan(0);
  });

  test('shadow limiters are planned but not enforced', () => {
    const shadow = compileLimiter(
      's',
      { message: '', shadow: true, overLimitCache: true, windows: [{ limit: 1, period: 1000, key: ['ip'] }] },
      'open',
    );
    const windows = routeWindows([widgetInit, shadow]);
    const requests = planWindows(windows, () => 'v', '');
    expect(requests.map((r) => r.enforce)).toEqual([true, true, false]);
    expect(requests.map((r) => r.cacheWhenSpent)).toEqual([true, true, false]);
    expect(windows.map((w) => w.policyName)).toEqual(['widget-init.0', 'widget-init.1', 's.0']);
  });
});
