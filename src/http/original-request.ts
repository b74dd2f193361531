import type { IncomingHttpHeaders } from 'node:http';

/**
 * The request a proxy asks about (forward-auth), read from the headers it sets: Traefik's
 * forwardAuth and Caddy's forward_auth send X-Forwarded-Method, X-Forwarded-Uri and
 * X-Forwarded-Host; nginx's auth_request is given X-Original-Method and X-Original-URI by its
 * config. Pure: headers in, the original request or the reason it cannot be read out.
 *
 * A proxy sets one family and passes the client's other headers through, so a client could add
 * the other family to name a cheaper path: a request that names the method or URI in both
 * families is refused as ambiguous rather than believed either way.
 */
export type OriginalRequest =
  | { readonly ok: true; readonly method: string; readonly uri: string; readonly host: string | undefined }
  | { readonly ok: false; readonly reason: string };

/** RFC 9110 token: what a method may be. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** True when the request names no original request at all (a health check on the decision port). */
export function namesNoOriginal(headers: IncomingHttpHeaders): boolean {
  return (
    headers['x-forwarded-method'] === undefined &&
    headers['x-forwarded-uri'] === undefined &&
    headers['x-original-method'] === undefined &&
    headers['x-original-uri'] === undefined
  );
}

export function originalRequest(headers: IncomingHttpHeaders): OriginalRequest {
  const forwarded = headers['x-forwarded-method'] !== undefined || headers['x-forwarded-uri'] !== undefined;
  const original = headers['x-original-method'] !== undefined || headers['x-original-uri'] !== undefined;
  if (forwarded && original) {
    return {
      ok: false,
      reason:
        'Both X-Forwarded-Method/X-Forwarded-Uri and X-Original-Method/X-Original-URI are present: ' +
        'send one family.',
    };
  }
  const [methodName, uriName] = original
    ? ['X-Original-Method', 'X-Original-URI']
    : ['X-Forwarded-Method', 'X-Forwarded-Uri'];
  // Node joins a repeated header's values with ", ": a method so joined is no token.
  const method = headers[methodName.toLowerCase()];
  const uri = headers[uriName.toLowerCase()];
  if (method === undefined || uri === undefined) {
    const missing = [method === undefined && methodName, uri === undefined && uriName].filter(Boolean);
    return {
      ok: false,
      reason: `The original request is named by ${methodName} and ${uriName}; missing: ${missing.join(', ')}.`,
    };
  }
  if (typeof method !== 'string' || !TOKEN.test(method)) {
    return { ok: false, reason: `${methodName} must be one HTTP method.` };
  }
  if (typeof uri !== 'string' || uri === '') {
    return { ok: false, reason: `${uriName} must be one non-empty request target.` };
  }
  const forwardedHost = headers['x-forwarded-host'];
  if (forwardedHost !== undefined) {
    if (typeof forwardedHost !== 'string' || forwardedHost === '' || forwardedHost.includes(',')) {
      return { ok: false, reason: 'X-Forwarded-Host must be one host.' };
    }
    return { ok: true, method, uri, host: forwardedHost };
  }
  return { ok: true, method, uri, host: headers.host };
}
