import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { upstreamHeaderDrop } from '../../src/proxy/response-relay.js';

/** The rule as written before round four: prefix tests only. */
function reference(name: string, cors: boolean, dropRetry: boolean): boolean {
  const gateway =
    name.startsWith('x-ratelimit-') || (name.startsWith('ratelimit-') && name !== 'ratelimit-policy');
  return (cors && name.startsWith('access-control-')) || gateway || (dropRetry && name === 'retry-after');
}

const NAMES = [
  'x-ratelimit-limit',
  'x-ratelimit-',
  'x-ratelimit',
  'x-request-id',
  'ratelimit',
  'ratelimit-policy',
  'ratelimit-remaining',
  'ratelimit-',
  'retry-after',
  'retry-after-x',
  'access-control-allow-origin',
  'access-control-',
  'access-control',
  'content-type',
  'date',
  'vary',
  'a',
  'r',
  'x',
  '',
];

describe('upstreamHeaderDrop', () => {
  test.each([false, true])('names that look alike (cors %s)', (cors) => {
    for (const dropRetry of [false, true]) {
      const drop = upstreamHeaderDrop(cors, dropRetry);
      for (const name of NAMES) expect([name, drop(name)]).toEqual([name, reference(name, cors, dropRetry)]);
    }
  });

  test('property: the same verdict as the prefix rule for any lower-case name', () => {
    const name = fc.oneof(
      fc.constantFrom(...NAMES),
      fc.tuple(fc.constantFrom(...NAMES), fc.stringMatching(/^[a-z0-9-]{0,8}$/)).map(([a, b]) => a + b),
      fc.stringMatching(/^[a-z0-9-]{0,24}$/),
    );
    fc.assert(
      fc.property(name, fc.boolean(), fc.boolean(), (n, cors, dropRetry) => {
        expect(upstreamHeaderDrop(cors, dropRetry)(n)).toBe(reference(n, cors, dropRetry));
      }),
    );
  });
});
