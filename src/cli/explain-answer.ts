import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { GatewayConfig } from '../config/schema.js';
import { LENGTH_REQUIRED } from '../http/count-request.js';
import { credentialRefusal } from '../http/credential-refusal.js';
import { connectionRefusal, malformedRequest } from '../http/request-context.js';
import { tooLargeMessage } from '../http/request-body.js';
import type { RequestIdentity } from '../identity/resolve.js';
import { windowCosts } from '../limits/charging.js';
import { bannedRefusal } from '../limits/ban.js';
import { DENIED, listVerdict } from '../limits/exemption.js';
import type { Refusal } from '../limits/refusal.js';
import { declaresTooLarge } from '../proxy/body-limit.js';
import type { CanonicalTarget } from '../routing/request-target.js';
import type { CompiledRoute, RouteWindow } from '../rules/compile.js';
import type { ListSubject } from '../rules/model.js';

/**
 * What `tollgate explain` says the gateway answers a request, in the request path's own order and
 * with its own functions (count-request.ts, request-context.ts, body-limit.ts): the one refusal
 * that is certain from the request alone, else "forwarded as"; then the refusals that depend on
 * live state (a window's count, a ban, the in-flight caps), which explain cannot know.
 */
export interface ExplainedRequest {
  readonly route: CompiledRoute;
  readonly method: string;
  readonly target: CanonicalTarget;
  readonly headers: IncomingHttpHeaders;
  /** Counting's identity; undefined on a route without limiters. */
  readonly identity: RequestIdentity | undefined;
  /** What the allow and deny lists match; undefined on a route without limiters. */
  readonly subject: ListSubject | undefined;
  /** The windows counted (a tier's, when the request has one). */
  readonly windows: readonly RouteWindow[];
  readonly config: GatewayConfig;
  /** The bans in force for the request's keys, by limiter (epoch ms of their end), read from the store; undefined: not read. */
  readonly bans?: ReadonlyMap<string, number> | undefined;
}

/** A refusal as explain prints it: "401 missing_token (Visitor token missing.)". */
export const refusalText = (r: Refusal): string => `${r.status} ${r.code} (${r.message})`;

/** The answer lines of `tollgate explain`: `refused: …` or `forwarded as: …`, then `may be refused: …`. */
export function explainAnswer(e: ExplainedRequest): string[] {
  const certain = certainRefusal(e);
  if (certain) return [`refused: ${certain}`];
  const forwarded = e.target.ok ? [`forwarded as: ${e.target.target}`] : [];
  return [...forwarded, ...liveRefusals(e).map((l) => `may be refused: ${l}`)];
}

/** The refusal the request gets whatever the live state, in the order the gateway checks. */
function certainRefusal(e: ExplainedRequest): string | undefined {
  const { route, identity, subject } = e;
  if (route.limiters.length > 0 && subject) {
    // Before counting: a deny list (an enforcing limiter's), then a body-priced route's Content-Length.
    const deniedBy = route.limiters.find((l) => !l.shadow && l.deny && listVerdict(l, subject) === 'denied');
    if (deniedBy) return `${refusalText(DENIED)}, by ${deniedBy.name}'s deny list, nothing counted`;
    if (route.charged && !windowCosts(e.windows, { headers: e.headers, method: e.method })) {
      return `${refusalText(LENGTH_REQUIRED)}, nothing counted`;
    }
    // Then the store: a ban in force answers before any window is counted (as count-request.ts).
    const bannedBy =
      e.bans && route.limiters.find((l) => e.bans!.has(l.name) && listVerdict(l, subject) !== 'exempt');
    if (bannedBy) {
      const until = e.bans!.get(bannedBy.name)!;
      const retryAfter = Math.max(1, Math.ceil((until - Date.now()) / 1000));
      return `${refusalText(bannedRefusal(retryAfter))}, by ${bannedBy.name}'s ban until ${new Date(until).toISOString()} (Retry-After: ${retryAfter}), nothing counted`;
    }
  }
  const after = route.limiters.length > 0 ? ', after counting' : '';
  const refusal =
    malformedRequest(e.target, e.method) ??
    connectionRefusal(e.headers.connection, route.identityHeaders) ??
    (identity ? credentialRefusal(route, identity) : undefined);
  if (refusal) return `${refusalText(refusal)}${after}`;
  if (declaresTooLarge({ headers: e.headers } as IncomingMessage, route.maxBodySize)) {
    return `413 payload_too_large (${tooLargeMessage(route.maxBodySize)})${after}`;
  }
  return undefined;
}

/** The refusals that depend on what the gateway holds now: windows, bans, in-flight slots. */
function liveRefusals(e: ExplainedRequest): string[] {
  const { route, config } = e;
  const lines: string[] = [];
  const enforcing = route.limiters.filter((l) => !l.shadow);
  if (enforcing.length > 0)
    lines.push('429 rate_limited when a window below is spent (live state: the counts in the store)');
  const banning = enforcing.filter((l) => l.ban);
  if (banning.length > 0) {
    const names = banning.map((l) => l.name).join(', ');
    const now = e.bans ? 'none in force now' : 'live state: the bans in the store';
    lines.push(`429 banned while ${names} holds this key banned (${now})`);
  }
  if (route.stream) {
    const { maxPerSession, maxPerIp } = config.streams;
    const upstream = config.upstreams[route.upstream]?.streamConnections ?? 0;
    if (maxPerSession > 0)
      lines.push(
        `429 too_many_streams when this visitor session holds ${maxPerSession} event streams (live state)`,
      );
    if (maxPerIp > 0)
      lines.push(`429 too_many_streams when this address holds ${maxPerIp} event streams (live state)`);
    if (upstream > 0)
      lines.push(
        `503 stream_capacity_reached when upstream ${route.upstream} holds ${upstream} streams (live state)`,
      );
  } else if (config.requests.maxInFlightPerIp > 0) {
    const max = config.requests.maxInFlightPerIp;
    lines.push(
      `429 too_many_requests_in_flight when this address has ${max} requests in progress (live state, per process)`,
    );
  }
  return lines;
}
