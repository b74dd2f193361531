import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalTarget, matchPathOf } from '../../src/routing/request-target.js';
import { Router, type RouteSpec } from '../../src/routing/router.js';
import { TargetCache } from '../../src/routing/target-cache.js';

/**
 * The request path's caches (the canonical form of a raw target, the route a match path took
 * last) answer exactly what the uncached functions do, for any sequence of requests, across
 * their bounds.
 */

// Few distinct values, so sequences repeat targets, hosts and methods, as clients do.
const rawTarget = fc.oneof(
  fc.constantFrom('/a', '/a/', '/A', '/a?x=1', '/a#f', '/a/../b', '/%61', '/a%2Fb', 'a', '/b;p=1', '//a'),
  fc.stringMatching(/^\/[a-cA-C%2F.;/?#]{0,14}$/),
);

describe('TargetCache', () => {
  test('answers canonicalTarget for every target, past its bound, never holding more than it', () => {
    fc.assert(
      fc.property(
        fc.array(rawTarget, { maxLength: 60 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 10 }),
        (targets, maxTargets, maxLength) => {
          const cache = new TargetCache(maxTargets, maxLength);
          for (const raw of targets) {
            expect(cache.of(raw)).toEqual(canonicalTarget(raw));
            expect(cache.size).toBeLessThanOrEqual(maxTargets);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  test('a repeated target gets the same object; a long one is not kept', () => {
    const cache = new TargetCache(4, 8);
    expect(cache.of('/abc')).toBe(cache.of('/abc'));
    cache.of('/abcdefghij');
    expect(cache.size).toBe(1);
  });
});

interface Spec extends RouteSpec {
  readonly name: string;
}

const route = fc.record({
  name: fc.string({ maxLength: 3 }),
  hosts: fc.array(fc.constantFrom('*', 'a.test', '*.a.test', 'B.test'), { minLength: 1, maxLength: 2 }),
  methods: fc.array(fc.constantFrom('*', 'GET', 'POST', 'DELETE'), { minLength: 1, maxLength: 2 }),
  paths: fc.array(fc.constantFrom('/a', '/a*', '/b/', '/b/c', '/*', '/c;x'), { minLength: 1, maxLength: 2 }),
});
const request = fc.record({
  host: fc.constantFrom(undefined, '', 'a.test', 'A.TEST:8080', 'x.a.test', 'b.test.', '[::1]:80'),
  method: fc.constantFrom('GET', 'get', 'POST', 'DELETE', 'PUT'),
  path: fc.constantFrom('/', '/a', '/a/', '/ab', '/b', '/b/', '/b/c', '/b/c/', '/c'),
});

describe('matchPathOf', () => {
  test("is canonicalTarget's match path for every target", () => {
    const target = fc.oneof(
      rawTarget,
      fc.string({ maxLength: 12 }),
      fc.stringMatching(/^\/[a-z?#%2F.;/]{0,10}$/),
    );
    fc.assert(
      fc.property(target, (raw) => {
        expect(matchPathOf(raw)).toBe(canonicalTarget(raw).matchPath);
      }),
      { numRuns: 2000 },
    );
    // Both ends: the fragment before the query, and the query before the fragment.
    expect(matchPathOf('/A#x?y')).toBe('/a');
    expect(matchPathOf('/A?x#y')).toBe('/a');
    expect(matchPathOf('/A/./B?x')).toBe('/a/b');
  });
});

describe('Router memo', () => {
  test("the route of every request is the uncached scan's, whatever came before and past the bound", () => {
    fc.assert(
      fc.property(
        fc.array(route, { minLength: 1, maxLength: 5 }),
        fc.array(request, { maxLength: 60 }),
        fc.integer({ min: 1, max: 4 }),
        (routes, requests, maxPaths) => {
          const specs: Spec[] = routes.map((r, i) => ({ ...r, name: `${i}${r.name}` }));
          const memo = new Router(specs, maxPaths);
          for (const { host, method, path } of requests) {
            // A new router has nothing memoised: its answer is the scan's.
            const expected = new Router(specs).matchPath(host, method, path);
            expect(memo.matchPath(host, method, path)).toBe(expected);
            expect(memo.match(host, method, path)).toBe(new Router(specs).match(host, method, path));
            expect(memo.memoised).toBeLessThanOrEqual(maxPaths);
            // Without the memo (replay's way): the same route, nothing memoised.
            const before = memo.memoised;
            expect(memo.scanPath(host, method, path)).toBe(expected);
            expect(memo.memoised).toBe(before);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  test('one path asked with another host or method is matched afresh', () => {
    const r = new Router<Spec>([
      { name: 'a', hosts: ['a.test'], methods: ['GET'], paths: ['/x'] },
      { name: 'any', hosts: ['*'], methods: ['*'], paths: ['/*'] },
    ]);
    expect(r.matchPath('a.test', 'GET', '/x')?.name).toBe('a');
    expect(r.matchPath('b.test', 'GET', '/x')?.name).toBe('any');
    expect(r.matchPath('a.test', 'POST', '/x')?.name).toBe('any');
    expect(r.matchPath('a.test', 'GET', '/x')?.name).toBe('a');
    expect(r.matchPath(undefined, 'GET', '/x')?.name).toBe('any');
  });
});
