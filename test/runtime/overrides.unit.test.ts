// The overrides file's format: a map at the top or under "overrides:", YAML or JSON; a file that
// does not parse, or has a bad entry, is refused whole with each problem named.
import { expect, test } from 'vitest';
import { parseOverridesFile } from '../../src/runtime/overrides.js';

test('YAML or JSON, at the top or under overrides:', () => {
  const yaml = parseOverridesFile('token:a: pro\nip:10.0.0.0/8: unlimited\n');
  expect([...yaml.entries]).toEqual([
    ['token:a', { tier: 'pro' }],
    ['ip:10.0.0.0/8', { unlimited: true }],
  ]);
  expect(parseOverridesFile('{"overrides": {"workspace:acme": {"limit": 5, "burst": 10}}}')).toEqual({
    entries: new Map([['workspace:acme', { limit: 5, burst: 10 }]]),
    errors: [],
  });
  expect(parseOverridesFile('')).toEqual({ entries: new Map(), errors: [] });
});

test('refused: unparsable text, a list, a bad entry', () => {
  expect(parseOverridesFile('token:a: [').errors).toHaveLength(1);
  expect(parseOverridesFile('- token:a').errors).toEqual([
    'overrides must be a map of "<kind>:<value>" to a tier, "unlimited" or { limit }',
  ]);
  expect(parseOverridesFile('token:a: pro\nsub:b: { limit: -1 }\n').errors).toEqual([
    '"sub:b": one of { "tier": name }, { "unlimited": true } or { "limit": n, "burst"?: n } (positive integers)',
  ]);
});
