import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Refusal } from '../limits/refusal.js';
import { canonicalTargetOf } from '../routing/target-cache.js';
import { countRequest } from './count-request.js';
import { credentialRefusal } from './credential-refusal.js';
import { namesNoOriginal, originalRequest } from './original-request.js';
import {
  answerHealthCheck,
  isHealthCheck,
  keepCount,
  malformedRequest,
  preflightOf,
  requestShell,
  routeOf,
  settle,
  shed,
} from './request-context.js';
import { observeResponse } from './access-log.js';
import type { ListenerContext, RequestContext } from './context.js';
import { addRetryAfter, errorBody, sendError, sendRefusal } from './responses.js';

export interface DecisionContext extends ListenerContext {
  /** The status of a rate-limited answer: 429, or 403 for nginx's auth_request. */
  readonly onLimited: 429 | 403;
}

/**
 * A decision listener's handler (forward-auth): it reads the original request from the proxy's
 * headers (see original-request.ts), matches the same routes, resolves the same identity and
 * counts in the same store as the proxy handler (count-request.ts), and answers without forwarding:
 * 200 with the X-RateLimit-* headers when the request may pass, else the gateway's refusal with
 * its exact headers and body.
 *
 * With onLimited 403 (nginx), whose auth_request keeps only the status of a refusal, every refusal
 * also carries its JSON body in X-Tollgate-Error, for the nginx config to answer with.
 * The in-flight caps (requests.maxInFlightPerIp, streams) are not applied: the decision service
 * never sees the request end.
 */
export function createDecisionHandler(
  ctx: DecisionContext,
): (req: IncomingMessage, res: ServerResponse) => void {
  return requestShell(ctx, 'decision', (c) => answer(ctx, c));
}

async function answer(ctx: DecisionContext, c: RequestContext): Promise<void> {
  // A health check names no original request: it asks about the decision port itself.
  if (namesNoOriginal(c.req.headers) && isHealthCheck(c.req.method, c.req.url)) {
    c.method = c.req.method;
    c.path = c.req.url;
    return answerHealthCheck(c, c.req.url!);
  }
  observeResponse(c, 'info');
  if (shed(c)) return;
  const original = originalRequest(c.req.headers);
  if (!original.ok) return sendError(c.res, 400, 'invalid_original_request', original.reason, c.headers);
  const { method, host } = original;
  const target = canonicalTargetOf(original.uri);
  c.method = method;
  c.path = target.ok ? target.path : target.matchPath;

  // A CORS preflight is never counted (as on a proxy listener): the proxy's upstream answers it.
  if (preflightOf(c, method, host, target.matchPath)) return allow(c);
  const r = routeOf(c, method, host, target.matchPath);
  if (!r) return;
  if (r.route.limiters.length > 0) {
    const refusal = keepCount(r, await countRequest(r));
    if (refusal) return refuse(ctx, c, refusal);
  }
  // Refused only after counting, as on a proxy listener.
  const refusal = malformedRequest(target, method) ?? (r.identity && credentialRefusal(r.route, r.identity));
  settle(r, refusal ? refusal.decision : undefined);
  if (refusal) return refuse(ctx, c, refusal);
  allow(c);
}

function allow(c: RequestContext): void {
  c.headers['content-length'] = '0';
  c.res.writeHead(200, c.headers);
  c.res.end();
}

/** The proxy listener's refusal, its 429 given the listener's onLimited status. */
function refuse(ctx: DecisionContext, c: RequestContext, refusal: Refusal): void {
  const status = refusal.status === 429 ? ctx.onLimited : refusal.status;
  if (ctx.onLimited === 403) {
    addRetryAfter(c.headers, refusal); // first, as on a proxy listener's refusal
    c.headers['x-tollgate-error'] = asciiJson(errorBody(refusal.code, refusal.message));
  }
  sendRefusal(c.res, refusal, c.headers, status);
}

/**
 * JSON text a header can carry: non-ASCII characters as \u escapes (the same JSON value; the
 * same bytes when the message is ASCII, as the shipped messages are).
 */
export function asciiJson(json: string): string {
  // eslint-disable-next-line no-control-regex -- everything outside ASCII is what is escaped
  return json.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
