import type { ServerResponse } from 'node:http';
import type { RateLimitReport } from '../limits/decision.js';

/** The one JSON error shape of the gateway's own responses: {"error":{"code","message"}}. */
export function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

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

export function sendJson(
  res: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}

export function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers?: Record<string, string>,
): void {
  sendJson(res, status, errorBody(code, message), headers);
}
