import { createHash } from 'node:crypto';
import type { RateLimitReport } from './decision.js';

/**
 * The rate-limit headers: X-RateLimit-* always, and with `ietfPolicy` (the route's policy, when
 * the listener sends the IETF headers) RateLimit-Policy and RateLimit, as
 * draft-ietf-httpapi-ratelimit-headers-11 defines them: Structured Field Lists (RFC 9651) of
 * `"name";q=limit;w=window` and `"name";r=remaining;t=seconds;pk=:bytes:`.
 */
export function addRateLimitHeaders(
  headers: Record<string, string>,
  report: RateLimitReport | undefined,
  ietfPolicy?: string,
  partitionKey?: string,
): void {
  if (!report) return;
  headers['x-ratelimit-limit'] = String(report.limit);
  headers['x-ratelimit-remaining'] = String(report.remaining);
  headers['x-ratelimit-reset'] = String(report.resetSec);
  if (ietfPolicy) {
    headers['ratelimit-policy'] = ietfPolicy;
    const item = `${sfString(report.policyName)};r=${report.remaining};t=${report.resetInSec}`;
    headers['ratelimit'] = partitionKey === undefined ? item : `${item};pk=${partitionKey}`;
  }
}

/**
 * The `pk` of a window: the first 12 bytes of the SHA-256 of its store key, as a Structured Field
 * Byte Sequence. The key holds only hashed key parts, and is hashed again: the client sees which
 * budget it spends (one value per window and key), never the address or credential behind it.
 */
export function partitionKey(storeKey: string): string {
  return `:${createHash('sha256').update(storeKey).digest().subarray(0, 12).toString('base64')}:`;
}

/** A Structured Field String (RFC 9651 §3.3.3): printable ASCII, `"` and `\` escaped. */
export function sfString(value: string): string {
  // A String holds printable ASCII only.
  if (/[^\x20-\x7e]/.test(value)) throw new Error(`not a structured-field string: ${JSON.stringify(value)}`);
  return `"${value.replace(/[\\"]/g, '\\$&')}"`;
}

/** The IETF fields the gateway adds to a forwarded response, after the upstream's own (section 7.2). */
const IETF_FIELDS = ['ratelimit-policy', 'ratelimit'] as const;

/**
 * Joins the upstream's own RateLimit-Policy and RateLimit with the gateway's: both are Lists, so
 * the gateway's policies are appended to the upstream's members (the upstream's first, untouched).
 * `out` holds the response's headers with the gateway's values set; `upstream` the upstream's.
 */
export function appendToUpstreamFields(
  out: Record<string, unknown>,
  upstream: Readonly<Record<string, string | string[] | undefined>>,
  gateway: Readonly<Record<string, string>>,
): void {
  for (const name of IETF_FIELDS) {
    const theirs = upstream[name];
    const ours = gateway[name];
    if (theirs === undefined || ours === undefined) continue;
    const members = (Array.isArray(theirs) ? theirs : [theirs]).map((v) => v.trim()).filter((v) => v !== '');
    out[name] = members.length === 0 ? ours : `${members.join(', ')}, ${ours}`;
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
