import type { RateLimitReport } from './decision.js';

/**
 * Adds the X-RateLimit-* headers of the reported window to `headers`; with `ietfPolicy` (the
 * route's policy, when the listener sends the IETF headers) also RateLimit-Policy and RateLimit
 * (draft-ietf-httpapi-ratelimit-headers: `"name";q=limit;w=window` and `"name";r=remaining;t=seconds`).
 */
export function addRateLimitHeaders(
  headers: Record<string, string>,
  report: RateLimitReport | undefined,
  ietfPolicy?: string,
): void {
  if (!report) return;
  headers['x-ratelimit-limit'] = String(report.limit);
  headers['x-ratelimit-remaining'] = String(report.remaining);
  headers['x-ratelimit-reset'] = String(report.resetSec);
  if (ietfPolicy) {
    headers['ratelimit-policy'] = ietfPolicy;
    headers['ratelimit'] = `"${report.policyName}";r=${report.remaining};t=${report.resetInSec}`;
  }
}

/** Takes a window's headers off again: for a refusal that is not the window's (an in-flight cap). */
export function removeRateLimitHeaders(headers: Record<string, string>): void {
  delete headers['x-ratelimit-limit'];
  delete headers['x-ratelimit-remaining'];
  delete headers['x-ratelimit-reset'];
  delete headers['ratelimit-policy'];
  delete headers['ratelimit'];
}
