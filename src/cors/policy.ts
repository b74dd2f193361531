/**
 * CORS policies, compiled once from the config: origin checks are a Set lookup and every header
 * value is a string built here, so a request on a CORS route allocates nothing for them.
 * Pure: no sockets; src/http/cors.ts puts the answers on the wire.
 */
import type { CorsPolicyConfig } from '../config/schema.js';

/**
 * The response headers a cross-origin script may read: the gateway's rate-limit headers (the
 * IETF pair too, when a listener sends them) and the request id. Browsers hide all others but
 * the safelisted few, so without this a widget could not read Retry-After on its 429.
 */
export const EXPOSED_HEADERS =
  'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Request-Id, RateLimit, RateLimit-Policy';

/** A preflight answer's cache depends on all three request headers it was judged on. */
export const PREFLIGHT_VARY = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers';

export interface CorsPolicy {
  readonly name: string;
  /** origins: "*". Never together with credentials (the schema refuses it). */
  readonly anyOrigin: boolean;
  readonly origins: ReadonlySet<string>;
  readonly credentials: boolean;
  readonly methods: ReadonlySet<string>;
  /** Lower case. */
  readonly headers: ReadonlySet<string>;
  /** Header values, built once. */
  readonly allowMethods: string;
  /** "" when the policy allows no request headers beyond the safelisted ones. */
  readonly allowHeaders: string;
  /** Whole seconds. */
  readonly maxAge: string;
}

export function compileCorsPolicy(name: string, cfg: CorsPolicyConfig): CorsPolicy {
  const methods = [...new Set(cfg.methods)];
  const headers = [...new Set(cfg.headers)];
  return Object.freeze({
    name,
    anyOrigin: cfg.origins === '*',
    origins: new Set(cfg.origins === '*' ? [] : cfg.origins),
    credentials: cfg.credentials,
    methods: new Set(methods),
    headers: new Set(headers),
    allowMethods: methods.join(', '),
    allowHeaders: headers.map(headerCase).join(', '),
    maxAge: String(Math.floor(cfg.maxAge / 1000)),
  });
}

/** "x-widget-token" → "X-Widget-Token": header names are case-insensitive; this is for people reading them. */
function headerCase(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
}

/**
 * The Access-Control-Allow-Origin value for a request's Origin header, or undefined when the
 * origin may not read the response (or the request names none). "*" is sent as "*", never
 * echoed; a listed origin is echoed only when it matches exactly, so a look-alike
 * ("https://shop.example.evil.test") or two Origin headers joined by Node never pass.
 */
export function allowedOrigin(policy: CorsPolicy, origin: string | undefined): string | undefined {
  if (origin === undefined) return undefined;
  if (policy.anyOrigin) return '*';
  return policy.origins.has(origin) ? origin : undefined;
}

export type PreflightVerdict =
  | { readonly allowed: true; readonly allowOrigin: string }
  | { readonly allowed: false; readonly code: string; readonly message: string };

/**
 * Whether a preflight may go ahead: its origin, the method it asks for and every header it
 * names (Access-Control-Request-Headers, a comma-separated list) must be allowed.
 */
export function judgePreflight(
  policy: CorsPolicy,
  origin: string,
  method: string,
  requestHeaders: string | undefined,
): PreflightVerdict {
  const allowOrigin = allowedOrigin(policy, origin);
  if (allowOrigin === undefined) {
    return { allowed: false, code: 'cors_origin_not_allowed', message: 'This origin may not call this API.' };
  }
  if (!policy.methods.has(method)) {
    return {
      allowed: false,
      code: 'cors_method_not_allowed',
      message: 'This method is not allowed in cross-origin requests.',
    };
  }
  if (requestHeaders !== undefined) {
    for (const raw of requestHeaders.split(',')) {
      const header = raw.trim().toLowerCase();
      if (header !== '' && !policy.headers.has(header)) {
        return {
          allowed: false,
          code: 'cors_header_not_allowed',
          message: 'A requested header is not allowed in cross-origin requests.',
        };
      }
    }
  }
  return { allowed: true, allowOrigin };
}
