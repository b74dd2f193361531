import { describe, expect, test } from 'vitest';
import { parseRateLimitHeaders, parseRetryAfter, retryDelayMs } from '../../src/headers.js';

const NOW = 1_800_000_000_000;
const from = (headers: Record<string, string>) => (name: string) => headers[name];

describe('rate-limit headers', () => {
  test('a 429 of the gateway: every header read', () => {
    const h = parseRateLimitHeaders(
      from({
        'x-ratelimit-limit': '30',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': '1800000060',
        'retry-after': '60',
      }),
      NOW,
    );
    expect(h).toEqual({ limit: 30, remaining: 0, resetAtMs: 1_800_000_060_000, retryAfterMs: 60_000 });
    expect(retryDelayMs(h, NOW)).toBe(60_000);
  });

  test('absent headers are undefined; a response of an unlimited surface says nothing', () => {
    expect(parseRateLimitHeaders(from({}), NOW)).toEqual({
      limit: undefined,
      remaining: undefined,
      resetAtMs: undefined,
      retryAfterMs: undefined,
    });
  });

  test('malformed values are never read as numbers', () => {
    for (const bad of ['', '-1', '1.5', '1e3', 'ten', '0x10', '99999999999999999999']) {
      const h = parseRateLimitHeaders(
        from({
          'x-ratelimit-limit': bad,
          'x-ratelimit-remaining': bad,
          'x-ratelimit-reset': bad,
          'retry-after': bad,
        }),
        NOW,
      );
      expect(h, bad).toEqual({
        limit: undefined,
        remaining: undefined,
        resetAtMs: undefined,
        retryAfterMs: undefined,
      });
    }
  });

  test('Retry-After: delta seconds, an HTTP date, a past date (no wait), nothing else', () => {
    expect(parseRetryAfter('3600', NOW)).toBe(3_600_000);
    expect(parseRetryAfter(' 0 ', NOW)).toBe(0);
    expect(parseRetryAfter(new Date(NOW + 90_000).toUTCString(), NOW)).toBe(90_000);
    expect(parseRetryAfter(new Date(NOW - 5_000).toUTCString(), NOW)).toBe(0);
    expect(parseRetryAfter('Sun, 99 Foo 2026 25:00:00 GMT', NOW)).toBeUndefined();
    expect(parseRetryAfter('soon 5', NOW)).toBeUndefined();
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
  });

  test('without Retry-After, a 429 waits until X-RateLimit-Reset; with neither, the wait is unknown', () => {
    const resetOnly = parseRateLimitHeaders(from({ 'x-ratelimit-reset': '1800000042' }), NOW);
    expect(retryDelayMs(resetOnly, NOW)).toBe(42_000);
    expect(retryDelayMs(resetOnly, NOW + 50_000)).toBe(0);
    expect(retryDelayMs(parseRateLimitHeaders(from({}), NOW), NOW)).toBeUndefined();
  });

  test('works on fetch Headers (any case)', () => {
    const headers = new Headers({ 'X-RateLimit-Remaining': '7', 'Retry-After': '2' });
    const h = parseRateLimitHeaders((n) => headers.get(n), NOW);
    expect([h.remaining, h.retryAfterMs]).toEqual([7, 2000]);
  });
});
