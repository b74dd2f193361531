/**
 * The rate-limit headers of one response (docs/http.md), read into numbers. Each is undefined when
 * absent or malformed: a client must never wait on a value it could not read.
 */
export interface RateLimitHeaders {
  /** X-RateLimit-Limit: the window's budget. */
  readonly limit: number | undefined;
  /** X-RateLimit-Remaining: requests still available in the window. */
  readonly remaining: number | undefined;
  /** X-RateLimit-Reset (Unix seconds), in milliseconds: when the budget is restored. */
  readonly resetAtMs: number | undefined;
  /** Retry-After (delta seconds or an HTTP date), in milliseconds from the response. */
  readonly retryAfterMs: number | undefined;
}

/** Reads one header by name; `Headers.get` and plain lower-case maps both fit. */
export type HeaderGetter = (name: string) => string | null | undefined;

const INTEGER = /^\s*\d+\s*$/;

/** A non-negative integer header value, or undefined. */
function integer(value: string | null | undefined): number | undefined {
  if (value == null || !INTEGER.test(value)) return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * Retry-After is either delta seconds or an HTTP date (RFC 9110 §10.2.3). A date in the past means
 * "now" (0). Anything else is unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value == null) return undefined;
  const seconds = integer(value);
  if (seconds !== undefined) return seconds * 1000;
  // Only the date forms: Date.parse would also read "1" or "soon 5" as dates.
  if (!/^\s*[A-Za-z]{3},? /.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

export function parseRateLimitHeaders(get: HeaderGetter, nowMs: number): RateLimitHeaders {
  const reset = integer(get('x-ratelimit-reset'));
  return {
    limit: integer(get('x-ratelimit-limit')),
    remaining: integer(get('x-ratelimit-remaining')),
    resetAtMs: reset === undefined ? undefined : reset * 1000,
    retryAfterMs: parseRetryAfter(get('retry-after'), nowMs),
  };
}

/**
 * How long to wait before retrying a 429: Retry-After, else until X-RateLimit-Reset; undefined when
 * the response says neither (then the wait is unknown and the 429 is not retried).
 */
export function retryDelayMs(headers: RateLimitHeaders, nowMs: number): number | undefined {
  if (headers.retryAfterMs !== undefined) return headers.retryAfterMs;
  if (headers.resetAtMs !== undefined) return Math.max(0, headers.resetAtMs - nowMs);
  return undefined;
}
