// The rate-limit headers against draft-ietf-httpapi-ratelimit-headers-11's syntax: RateLimit and
// RateLimit-Policy are Structured Field Lists, parsed back here with a strict RFC 9651 parser; pk is
// a Byte Sequence of the hashed store key; the upstream's own fields come first, the gateway's after.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { RateLimitReport } from '../../src/limits/decision.js';
import {
  addRateLimitHeaders,
  appendToUpstreamFields,
  partitionKey,
  sfString,
} from '../../src/limits/rate-limit-headers.js';
import { compileLimiter, compileRoute } from '../../src/rules/compile.js';
import { parseList } from '../helpers/structured-fields.js';

const report = (over: Partial<RateLimitReport> = {}): RateLimitReport => ({
  limit: 10,
  remaining: 3,
  resetSec: 1_795_000_000,
  resetInSec: 42,
  policyName: 'api.0',
  ...over,
});

const KEY = 'tg:{nQ9C-xNXLJcl0yWM2oDLkb}:api:60000:ip';

describe('addRateLimitHeaders', () => {
  test('without a policy: the X-RateLimit-* headers alone', () => {
    const headers: Record<string, string> = {};
    addRateLimitHeaders(headers, report(), undefined, partitionKey(KEY));
    expect(headers).toEqual({
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '3',
      'x-ratelimit-reset': '1795000000',
    });
  });

  test('with a policy: the exact RateLimit field, pk last, and it parses as a List of one Item', () => {
    const headers: Record<string, string> = {};
    const pk = partitionKey(KEY);
    addRateLimitHeaders(headers, report(), '"api.0";q=10;w=60', pk);
    const digest = createHash('sha256').update(KEY).digest().subarray(0, 12);
    expect(pk).toBe(`:${digest.toString('base64')}:`);
    expect(headers['ratelimit']).toBe(`"api.0";r=3;t=42;pk=${pk}`);
    expect(headers['ratelimit-policy']).toBe('"api.0";q=10;w=60');
    const [item, ...rest] = parseList(headers['ratelimit']!);
    expect(rest).toEqual([]);
    expect(item!.value).toBe('api.0');
    expect([...item!.params.keys()]).toEqual(['r', 't', 'pk']);
    expect(item!.params.get('r')).toBe(3);
    expect(item!.params.get('t')).toBe(42);
    expect(Buffer.from(item!.params.get('pk') as Uint8Array)).toEqual(digest);
  });

  test('pk is 12 bytes (16 base64 characters) and shows nothing of the key', () => {
    const pk = partitionKey(KEY);
    expect(pk).toMatch(/^:[A-Za-z0-9+/]{16}:$/);
    expect(pk).not.toContain('nQ9C');
    expect(partitionKey(KEY)).toBe(pk); // stable: the same budget, the same pk
    expect(partitionKey(`${KEY}x`)).not.toBe(pk);
  });

  test('property: any name, remaining, reset and store key serialise to a List that parses back', () => {
    const printable = fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    });
    fc.assert(
      fc.property(printable, fc.nat(1e12), fc.nat(1e9), fc.string(), (name, remaining, resetInSec, key) => {
        const headers: Record<string, string> = {};
        const policy = `${sfString(name)};q=${remaining + 1};w=60`;
        addRateLimitHeaders(
          headers,
          report({ policyName: name, remaining, resetInSec }),
          policy,
          partitionKey(key),
        );
        const [item] = parseList(headers['ratelimit']!);
        expect(item!.value).toBe(name);
        expect(item!.params.get('r')).toBe(remaining);
        expect(item!.params.get('t')).toBe(resetInSec);
        const digest = createHash('sha256').update(key).digest().subarray(0, 12);
        expect(Buffer.from(item!.params.get('pk') as Uint8Array)).toEqual(digest);
        const [p] = parseList(headers['ratelimit-policy']!);
        expect(p!.value).toBe(name);
      }),
    );
  });

  test('sfString refuses what a String cannot hold', () => {
    expect(sfString('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(() => sfString('é')).toThrow('not a structured-field string');
    expect(() => sfString('a\nb')).toThrow('not a structured-field string');
  });
});

describe("a route's RateLimit-Policy", () => {
  test('every enforced window as a List of Items with q and w', () => {
    const l = compileLimiter(
      'l',
      {
        message: 'm',
        shadow: false,
        overLimitCache: true,
        windows: [
          { limit: 5, period: 60_000, key: ['ip'] },
          { limit: 100, period: 3_600_000, key: ['ip'] },
        ],
      },
      'open',
    );
    const route = compileRoute(
      { name: 'r', hosts: ['*'], methods: ['*'], paths: ['/*'], upstream: 'u', limiters: [], stream: false },
      [l],
    );
    expect(route.ietfPolicy).toBe('"l.0";q=5;w=60, "l.1";q=100;w=3600');
    const items = parseList(route.ietfPolicy);
    expect(items.map((i) => [i.value, Object.fromEntries(i.params)])).toEqual([
      ['l.0', { q: 5, w: 60 }],
      ['l.1', { q: 100, w: 3600 }],
    ]);
  });
});

describe('appendToUpstreamFields (draft section 7.2)', () => {
  const gateway = { ratelimit: '"g.0";r=1;t=2;pk=:AAAA:', 'ratelimit-policy': '"g.0";q=5;w=60' };

  test("the upstream's members first, then the gateway's, each field a valid List", () => {
    const out: Record<string, unknown> = { ...gateway };
    appendToUpstreamFields(
      out,
      { ratelimit: '"up";r=9;t=30', 'ratelimit-policy': ['"up";q=10;w=60', ' "daily";q=1000;w=86400 '] },
      gateway,
    );
    expect(out).toEqual({
      ratelimit: '"up";r=9;t=30, "g.0";r=1;t=2;pk=:AAAA:',
      'ratelimit-policy': '"up";q=10;w=60, "daily";q=1000;w=86400, "g.0";q=5;w=60',
    });
    expect(parseList(out['ratelimit'] as string).map((i) => i.value)).toEqual(['up', 'g.0']);
    expect(parseList(out['ratelimit-policy'] as string).map((i) => i.value)).toEqual(['up', 'daily', 'g.0']);
  });

  test("an upstream without the fields, or with empty ones, leaves the gateway's alone", () => {
    const out: Record<string, unknown> = { ...gateway };
    appendToUpstreamFields(out, { ratelimit: '  ' }, gateway);
    expect(out).toEqual(gateway);
  });

  test("without the gateway's fields the upstream's are left as they came", () => {
    const out: Record<string, unknown> = { ratelimit: '"up";r=9;t=30' };
    appendToUpstreamFields(out, { ratelimit: '"up";r=9;t=30' }, {});
    expect(out).toEqual({ ratelimit: '"up";r=9;t=30' });
  });
});

describe('parseList (the test parser itself)', () => {
  test.each(['"a";r=1,', '"a";r=1.5', '"a', ':abc:', '"a";R=1', '"é"', '"a" "b"'])('refuses %s', (text) => {
    expect(() => parseList(text)).toThrow('structured field');
  });
});
