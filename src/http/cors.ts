import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { CompiledRoute } from '../rules/compile.js';
import {
  allowedOrigin,
  EXPOSED_HEADERS,
  judgePreflight,
  PREFLIGHT_VARY,
  type CorsPolicy,
} from '../cors/policy.js';
import type { CorsRoute, RouteMatcher } from '../rules/model.js';
import { sendError } from './responses.js';

/**
 * The route whose CORS preflight this request is: an OPTIONS request with Origin and
 * Access-Control-Request-Method, for a route (of the requested method) that has a CORS policy.
 * `host` is the Host header's unless given (a decision listener's original request names its own).
 */
export function preflightRoute(
  router: RouteMatcher<CompiledRoute>,
  method: string,
  headers: IncomingHttpHeaders,
  matchPath: string,
  host: string | undefined = headers.host,
): CorsRoute<CompiledRoute> | undefined {
  if (method !== 'OPTIONS') return undefined;
  const requested = headers['access-control-request-method'];
  if (requested === undefined || headers.origin === undefined) return undefined;
  return router.matchPreflight(host, requested, matchPath);
}

/**
 * Answers a preflight here, never counted and never forwarded: 204 with the policy's headers, or
 * 403 (a JSON error, no CORS headers, so the browser refuses the real request) when the origin,
 * the method or a requested header is not allowed.
 */
export function answerPreflight(res: ServerResponse, policy: CorsPolicy, headers: IncomingHttpHeaders): void {
  res.setHeader('vary', PREFLIGHT_VARY);
  const verdict = judgePreflight(
    policy,
    headers.origin!,
    headers['access-control-request-method']!,
    headers['access-control-request-headers'],
  );
  if (!verdict.allowed) return sendError(res, 403, verdict.code, verdict.message);
  res.setHeader('access-control-allow-origin', verdict.allowOrigin);
  res.setHeader('access-control-allow-methods', policy.allowMethods);
  if (policy.allowHeaders !== '') res.setHeader('access-control-allow-headers', policy.allowHeaders);
  if (policy.credentials) res.setHeader('access-control-allow-credentials', 'true');
  res.setHeader('access-control-max-age', policy.maxAge);
  res.writeHead(204);
  res.end();
}

/**
 * Puts the route's CORS headers on the response before anything answers it, so every response
 * carries them: the gateway's own (401, 413, 429, 502, ...: writeHead merges them) and the
 * forwarded one (the relay drops the upstream's Access-Control-* headers and merges its Vary).
 * Vary: Origin is always sent, as the headers depend on the Origin; the others only to an
 * allowed origin.
 */
export function setCorsHeaders(res: ServerResponse, policy: CorsPolicy, origin: string | undefined): void {
  res.setHeader('vary', 'Origin');
  const allow = allowedOrigin(policy, origin);
  if (allow === undefined) return;
  res.setHeader('access-control-allow-origin', allow);
  res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
  if (policy.credentials) res.setHeader('access-control-allow-credentials', 'true');
}
