import { expect } from 'vitest';
import type { Reply } from './gateway.js';

/**
 * Distinct client addresses (sent through a trusted X-Forwarded-For), one per test, so that
 * budgets never mix between the tests of a file.
 */
export function clientAddresses(prefix = '198.51.100.'): () => string {
  let next = 1;
  return () => `${prefix}${next++}`;
}

/** The exact body of a 429. */
export const rateLimitedBody = (message: string): string =>
  JSON.stringify({ error: { code: 'rate_limited', message } });

/**
 * A 429 exactly as the spec demands: JSON body, the limiter's message, X-RateLimit-Remaining 0, and
 * a whole-second Retry-After (1..maxRetryAfter) that counts down to X-RateLimit-Reset.
 */
export function expectLimited(reply: Reply, limit: number, message: string, maxRetryAfter: number): void {
  expect(reply.status).toBe(429);
  expect(reply.headers['content-type']).toBe('application/json');
  expect(reply.text).toBe(rateLimitedBody(message));
  expect(reply.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(reply.headers['x-ratelimit-remaining']).toBe('0');
  const retryAfter = Number(reply.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(maxRetryAfter);
  // Retry-After counts down to the reset from the moment of the answer, which lies between the
  // request's sending and its receipt (on a loaded machine, the check itself may come much later).
  const reset = Number(reply.headers['x-ratelimit-reset']);
  const now = Date.now();
  const sent = Math.ceil((reply.sentAtMs ?? now) / 1000);
  const received = Math.ceil((reply.receivedAtMs ?? now) / 1000);
  expect(reset).toBeGreaterThanOrEqual(sent + retryAfter - 1);
  expect(reset).toBeLessThanOrEqual(received + retryAfter + 1);
}
