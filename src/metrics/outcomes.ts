// What the metrics count requests under: a limiter's decision, an upstream exchange's result.

/**
 * What came of a request that a limiter saw, counted under the limiter: its window's verdict
 * (allowed, limited, shadow_limited, store_error), or the refusal that followed counting (a bad
 * credential, an in-flight or stream cap, a body bound or deadline, a malformed target), so that
 * no refusal is counted as allowed.
 */
export type LimiterDecision =
  | 'allowed'
  | 'limited'
  | 'shadow_limited'
  | 'store_error'
  | 'unauthorized'
  | 'too_many_in_flight'
  | 'too_many_streams'
  | 'body_too_large'
  | 'body_timeout'
  | 'invalid_target'
  // a body-priced route's request without a Content-Length (411), refused before counting
  | 'length_required'
  // allow and deny lists, bans (src/limits/exemption.ts, ban.ts)
  | 'exempt'
  | 'denied'
  | 'banned';

/** What an upstream exchange came to: a status class, or the gateway's own failure. */
export type UpstreamResult = '1xx' | '2xx' | '3xx' | '4xx' | '5xx' | 'unreachable' | 'timeout' | 'aborted';

export const statusClass = (status: number): UpstreamResult =>
  status >= 500 ? '5xx' : status >= 400 ? '4xx' : status >= 300 ? '3xx' : status >= 200 ? '2xx' : '1xx';
