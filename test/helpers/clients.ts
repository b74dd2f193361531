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
