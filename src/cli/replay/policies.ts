/**
 * What replay reads of a log line for the policies of a route (tiers and overrides, allow and deny
 * lists, weighted cost, countOnly, chargeAfter), for the gateway's own functions
 * (src/limits/tier-choice.ts, exemption.ts, charging.ts) to decide with; and, where a line lacks
 * a field a policy needs, the warning that says so (by limiter and field), instead of a guess.
 */
import type { Peer } from '../../identity/peer.js';
import { chooseTier, DEFAULT_TIER, windowsFor, type TierChoice } from '../../limits/tier-choice.js';
import type { PricedRequest } from '../../limits/charging.js';
import type { OverrideTable } from '../../limits/overrides.js';
import type { CompiledLimiter, CompiledRoute, ListSubject, RouteWindow } from '../../rules/model.js';
import type { LogRecord } from './log-formats.js';

/** The tier sources of a config that replay can follow (config `tiers`). */
export interface TierSources {
  readonly jwt: boolean;
  readonly workspaceTokenPlan: boolean;
  readonly overrides: OverrideTable;
}

/** A field a policy needed and a line lacked: the requests it concerns, and what replay did instead. */
export interface Warning {
  readonly limiter: string;
  readonly field: string;
  readonly message: string;
  requests: number;
}

/** Warnings by limiter and field, counted per request. */
export class Warnings {
  readonly #all = new Map<string, Warning>();

  add(limiter: string, field: string, message: string): void {
    const id = `${limiter}\0${field}`;
    const w = this.#all.get(id);
    if (w) w.requests++;
    else this.#all.set(id, { limiter, field, message, requests: 1 });
  }

  list(): Warning[] {
    return [...this.#all.values()];
  }
}

/** Whether a request on `route` has its tier chosen (the gateway's needsTier). */
export const tierApplies = (tiers: TierSources, route: CompiledRoute): boolean =>
  route.windows.length > 0 && (route.tiered === true || !tiers.overrides.empty);

/**
 * The request's tier (the gateway's tierOf): an override of the replayed config's overrides file,
 * then the credential's tier as logged (`tier`), for the sources the config turns on.
 */
export function tierOfRecord(
  tiers: TierSources,
  route: CompiledRoute,
  rec: LogRecord,
  peer: Peer,
  warnings: Warnings,
): { choice: TierChoice; windows: readonly RouteWindow[] } {
  const table = tiers.overrides;
  if (!table.empty) {
    for (const kind of ['token', 'workspace', 'sub'] as const) {
      if (table.kinds.has(kind) && rec[kind] === undefined)
        warnLimiters(route, warnings, kind, `overrides by ${kind}: the line has no "${kind}"; not matched`);
    }
    if (table.kinds.has('ip') && !peer.addr)
      warnLimiters(
        route,
        warnings,
        'client',
        'overrides by address: the line has no client address; not matched',
      );
  }
  // null: the gateway checked, and the request had none (no warning above).
  const override = table.lookup({
    token: rec.token ?? undefined,
    workspace: rec.workspace ?? undefined,
    sub: rec.sub ?? undefined,
    ip: peer.addr ? peer.key : undefined,
  });
  // The credential's tier is read on a route with tiers only (as the gateway verifies it only there).
  const tiered = route.tiered === true;
  if (!override && tiered && (tiers.jwt || tiers.workspaceTokenPlan) && rec.tier === undefined) {
    for (const w of route.windows)
      if (w.tiers)
        warnings.add(w.limiter.name, 'tier', 'the line has no "tier": counted at the default tier');
  }
  const named = rec.tier ?? undefined;
  const choice = chooseTier(
    override,
    tiered && tiers.jwt ? named : undefined,
    tiered && tiers.workspaceTokenPlan ? named : undefined,
  );
  return { choice, windows: choice === DEFAULT_TIER ? route.windows : windowsFor(route.windows, choice) };
}

/** The tier as the report counts requests by it. */
export function tierLabel(choice: TierChoice): string {
  if (choice.source === 'default') return 'default';
  const action = choice.override?.action;
  if (action && 'unlimited' in action) return 'unlimited (override)';
  if (action && 'limit' in action) return `limit ${action.limit} (override)`;
  return `${choice.tier} (${choice.source})`;
}

/** What the route's allow and deny lists see of the request: its address, token and workspace as logged. */
export function listSubjectOf(
  limiters: readonly CompiledLimiter[],
  rec: LogRecord,
  peer: Peer,
  warnings: Warnings,
): ListSubject {
  for (const l of limiters) {
    for (const list of [l.allow, l.deny]) {
      if (!list) continue;
      if (!peer.addr)
        warnings.add(l.name, 'client', 'allow/deny: the line has no client address; not matched by address');
      if (list.namesTokens && rec.token === undefined)
        warnings.add(
          l.name,
          'token',
          'allow/deny names tokens: the line has no "token"; not matched by token',
        );
      if (list.namesWorkspaces && rec.workspace === undefined)
        warnings.add(
          l.name,
          'workspace',
          'allow/deny names workspaces: the line has no "workspace"; not matched by workspace',
        );
    }
  }
  return { address: peer.addr, token: rec.token ?? undefined, workspace: rec.workspace ?? undefined };
}

/** The request as charging.ts prices it: its logged body size as Content-Length. */
export function pricedRequest(
  windows: readonly RouteWindow[],
  rec: LogRecord,
  warnings: Warnings,
): PricedRequest {
  if (rec.bytes !== undefined)
    return { headers: { 'content-length': String(rec.bytes) }, method: rec.method };
  for (const w of windows) {
    const cost = w.limiter.charging?.cost;
    if (cost !== undefined && typeof cost !== 'number' && w.index === 0)
      warnings.add(
        w.limiter.name,
        'bytes',
        'cost by body bytes: the line has no "bytes"; charged as a request without a body (1)',
      );
  }
  return { headers: {}, method: rec.method };
}

/** The response as postCharges reads it: each chargeAfter header with the logged cost. */
export function chargedHeaders(
  windows: readonly RouteWindow[],
  rec: LogRecord,
  warnings: Warnings,
): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const w of windows) {
    const c = w.limiter.charging;
    if (!c?.deferred || w.index !== 0) continue;
    if (c.countOnly && rec.status === undefined)
      warnings.add(w.limiter.name, 'status', 'countOnly: the line has no status; not charged');
    if (c.afterHeader === undefined) continue;
    if (rec.charged === undefined)
      warnings.add(
        w.limiter.name,
        'charged',
        `chargeAfter ${c.afterHeader}: the line has no "charged"; charged 0`,
      );
    else headers[c.afterHeader] = String(rec.charged);
  }
  return headers;
}

function warnLimiters(route: CompiledRoute, warnings: Warnings, field: string, message: string): void {
  for (const l of route.limiters) warnings.add(l.name, field, message);
}
