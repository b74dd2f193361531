import { fileURLToPath } from 'node:url';
import { status as grpcStatus, type ServiceDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import type { CompiledLimiter, RuleTable as CompiledRules } from '../rules/model.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import type { LocalFallback } from '../store/local-fallback.js';
import type { WindowResult, WindowStore } from '../store/window-store.js';
import { answerWithoutStore, decideDescriptors, refusedAnswer, type RateLimitAnswer } from './answer.js';
import { descriptorTier, windowsAtTier } from './descriptor-tier.js';
import type { OverrideTable } from '../limits/overrides.js';
import { DEFAULT_TIER } from '../limits/tier-choice.js';
import { bannedBy } from '../limits/ban.js';
import { hasLists, listVerdict } from '../limits/exemption.js';
import { parseAddress } from '../net/client-ip.js';
import {
  planDescriptors,
  type DescriptorEntry,
  type DescriptorMatch,
  type DescriptorPlan,
} from './descriptor-table.js';

/** The rule table, with its config (src/rules/compile.ts's, which sits above this folder). */
type RuleTable = CompiledRules<GatewayConfig>;

/** RateLimitRequest as proto-loader gives it (camelCase, defaults filled in). */
export interface RateLimitRequest {
  readonly domain: string;
  readonly descriptors: readonly { readonly entries: readonly DescriptorEntry[] }[];
  readonly hitsAddend: number;
}

/** The .proto ships beside this module: `npm run build` copies it into dist/envoy/. */
const PROTO = fileURLToPath(new URL('./rls.proto', import.meta.url));
export const SERVICE_NAME = 'envoy.service.ratelimit.v3.RateLimitService';
/** How proto-loader maps the messages: the same options for the server and the tests' client. */
export const PROTO_OPTIONS = { keepCase: false, enums: String, longs: Number, defaults: true } as const;

/** The service definition of rls.proto. */
export function rateLimitServiceDefinition(): ServiceDefinition {
  const definition = loadSync(PROTO, PROTO_OPTIONS);
  return definition[SERVICE_NAME] as ServiceDefinition;
}

export interface RateLimitServiceContext {
  /** The rule table in force: a reload swaps it, as for HTTP requests. */
  readonly current: () => {
    readonly table: RuleTable;
    readonly keyPrefix: string;
    /** The overrides in force (the state's `tiers`, as HTTP requests read them); absent: none. */
    readonly tiers?: { readonly overrides: { current(): OverrideTable } } | undefined;
  };
  readonly store: WindowStore;
  /** Counts onStoreError: local limiters while the store fails. */
  readonly fallback?: LocalFallback;
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
}

/** A refusal of the call itself, as a gRPC status. */
export class CallError extends Error {
  constructor(
    readonly code: grpcStatus,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Decides one ShouldRateLimit call: matches its descriptors to limiters, checks and counts them in
 * the store (one call, shared with the HTTP requests of the same turn), and answers as Envoy's
 * filter expects. Throws CallError for a malformed request, or when the store failed and a matched
 * limiter fails closed.
 */
export async function shouldRateLimit(
  ctx: RateLimitServiceContext,
  request: RateLimitRequest,
): Promise<RateLimitAnswer> {
  // Envoy's own service refuses these two as well.
  if (request.domain === '') throw new CallError(grpcStatus.INVALID_ARGUMENT, 'domain must not be empty');
  if (request.descriptors.length === 0) {
    throw new CallError(grpcStatus.INVALID_ARGUMENT, 'descriptors must not be empty');
  }
  const { table, keyPrefix, tiers } = ctx.current();
  const found = request.descriptors.map((d) => table.descriptors.match(request.domain, d.entries));
  // The near-limit metrics' and recent refusals' "route" of a call: its domain.
  const route = `envoy:${request.domain}`;
  // [tiers] An override keyed by an entry's value chooses the tier (docs/envoy.md#tiers-and-overrides).
  // The service runs only with rateLimitService configured (restart-only), its overrideKeys filled in.
  const choice = tiers
    ? descriptorTier(
        tiers.overrides.current(),
        request.descriptors,
        table.config.rateLimitService!.overrideKeys,
      )
    : undefined;
  const matched = matchedLimiters(found);
  if (choice?.override && 'unlimited' in choice.override.action) {
    // As on HTTP: no window counts the request, and its limiters count it exempt.
    for (const l of matched) ctx.metrics.limiterDecision(l.name, 'exempt');
    return answerWithoutStore(request.descriptors.length);
  }
  // At the default tier, the plan's own default (each limiter's windows): no closure per call.
  const windowsOf =
    choice && choice !== DEFAULT_TIER ? (l: CompiledLimiter) => windowsAtTier(l, choice) : undefined;
  // [lists] A denied descriptor's limiter answers OVER_LIMIT uncounted; an exempt one is left out.
  const listed = screenDescriptors(ctx.metrics, found, matched, request.descriptors, route);
  if (listed.denied) return listed.denied;
  const { matches, limiters } = listed;
  const hits = request.hitsAddend > 0 ? request.hitsAddend : 1; // unset (0) means 1
  const plan = planDescriptors(matches, hits, keyPrefix, windowsOf);
  if (plan.requests.length === 0) return answerWithoutStore(request.descriptors.length);
  let answer: RateLimitAnswer;
  let results: WindowResult[];
  try {
    results = await ctx.store.hit(plan.requests);
    const now = Date.now();
    // [bans] Only a banned key's results carry bannedUntilMs: no work otherwise.
    const banned = results.some((r) => r.bannedUntilMs !== undefined);
    const ban = banned && bannedBy(plan.windows, results, now);
    if (ban) {
      for (const l of limiters) ctx.metrics.limiterDecision(l.name, l === ban.limiter ? 'banned' : 'allowed');
      ctx.metrics.nearLimit.refusal(route, ban.limiter.name, 'banned');
      return refusedAnswer(matches, ban.limiter, ban.retryAfterSec);
    }
    const decided = decideDescriptors(plan, results, now);
    answer = decided.answer;
    ctx.metrics.nearLimit.observe(route, plan.windows, plan.requests, results, decided.decision.blockedBy);
  } catch (err) {
    const closed = limiters.some((l) => !l.shadow && l.onStoreError === 'closed');
    // onStoreError: local: those limiters' descriptors are counted in process (the others answer OK).
    const local = matches.map((m) => (m?.limiter.onStoreError === 'local' ? m : undefined));
    if (!closed && ctx.fallback && local.some(Boolean)) {
      const localPlan = planDescriptors(local, hits, keyPrefix, windowsOf);
      const localResults = await ctx.fallback.hit(localPlan.requests);
      const decided = decideDescriptors(localPlan, localResults, Date.now());
      const localAnswer = decided.answer;
      const blockedBy = decided.decision.blockedBy;
      ctx.metrics.nearLimit.observe(route, localPlan.windows, localPlan.requests, localResults, blockedBy);
      for (const l of limiters)
        if (l.onStoreError !== 'local') ctx.metrics.limiterDecision(l.name, 'store_error');
      recordDecisions(ctx.metrics, local, localPlan, localResults, localAnswer, true);
      if (localAnswer.overallCode === 'OK') auditUncounted(ctx.metrics, limiters, 'local');
      throw new StoreFailedOpen(err, localAnswer);
    }
    for (const l of limiters) ctx.metrics.limiterDecision(l.name, 'store_error');
    if (closed) {
      throw new CallError(grpcStatus.UNAVAILABLE, `rate-limit store failed: ${(err as Error).message}`);
    }
    ctx.metrics.uncounted();
    auditUncounted(ctx.metrics, limiters);
    throw new StoreFailedOpen(err, answerWithoutStore(request.descriptors.length));
  }
  recordDecisions(ctx.metrics, matches, plan, results, answer);
  return answer;
}

/** The matched descriptors' limiters, each once, in the order of their first descriptor. */
function matchedLimiters(matches: readonly (DescriptorMatch | undefined)[]): CompiledLimiter[] {
  const limiters: CompiledLimiter[] = [];
  for (const m of matches) if (m && !limiters.includes(m.limiter)) limiters.push(m.limiter);
  return limiters;
}

/** tollgate_admitted_over_limit_total: the enforcing limiters a call let through uncounted (not `counted`'s). */
function auditUncounted(
  metrics: GatewayMetrics,
  limiters: readonly CompiledLimiter[],
  counted?: 'local',
): void {
  for (const l of limiters) if (!l.shadow && l.onStoreError !== counted) metrics.admittedOverLimit(l.name);
}

/**
 * The store failed, and every matched limiter lets requests through (OK) or was counted in process
 * (onStoreError: local): the answer is given, the failure logged.
 */
export class StoreFailedOpen extends Error {
  constructor(
    readonly failure: unknown,
    readonly answer: RateLimitAnswer,
  ) {
    super('store failed open');
  }
}

/**
 * Each matched limiter's verdict, in the same metric as HTTP requests: limited (a descriptor of
 * its was over the limit), shadow_limited (a shadow limiter's window was spent), else allowed.
 */
function recordDecisions(
  metrics: GatewayMetrics,
  matches: readonly (DescriptorMatch | undefined)[],
  plan: DescriptorPlan,
  results: readonly WindowResult[],
  answer: RateLimitAnswer,
  local = false,
): void {
  const rank = { allowed: 0, shadow_limited: 1, limited: 2 } as const;
  const verdicts = new Map<string, keyof typeof rank>();
  matches.forEach((m, i) => {
    if (!m) return;
    let decision: keyof typeof rank = 'allowed';
    if (answer.statuses[i]!.code === 'OVER_LIMIT') decision = 'limited';
    else if (m.limiter.shadow && plan.descriptors[i]!.some((w) => !results[w.request]!.allowed)) {
      decision = 'shadow_limited';
    }
    const before = verdicts.get(m.limiter.name);
    if (before === undefined || rank[decision] > rank[before]) verdicts.set(m.limiter.name, decision);
  });
  for (const [name, decision] of verdicts) {
    metrics.limiterDecision(name, decision);
    if (local) metrics.localDecision(name, decision);
  }
}

/** The descriptors left after the lists, and their limiters; or the answer of a denial. */
interface Screened {
  readonly matches: readonly (DescriptorMatch | undefined)[];
  readonly limiters: readonly CompiledLimiter[];
  readonly denied?: RateLimitAnswer;
}

/**
 * The allow and deny lists of the matched limiters (`limiters`: matchedLimiters'), for the client
 * address Envoy sends as a remote_address entry (the first one). Denied: OVER_LIMIT, nothing
 * counted; exempt: unmatched.
 */
function screenDescriptors(
  metrics: GatewayMetrics,
  matches: readonly (DescriptorMatch | undefined)[],
  limiters: readonly CompiledLimiter[],
  descriptors: RateLimitRequest['descriptors'],
  route: string,
): Screened {
  if (!hasLists(limiters)) return { matches, limiters };
  const remote = descriptors.flatMap((d) => d.entries).find((e) => e.key === 'remote_address');
  const subject = { address: remote && parseAddress(remote.value), token: undefined };
  // Counted exempt once per limiter, as on HTTP, however many descriptors matched it.
  const left: CompiledLimiter[] = [];
  for (const l of limiters) {
    if (listVerdict(l, subject) === 'exempt') metrics.limiterDecision(l.name, 'exempt');
    else left.push(l);
  }
  const kept = matches.map((m) => (m && left.includes(m.limiter) ? m : undefined));
  const denier = kept.find((m) => m && !m.limiter.shadow && listVerdict(m.limiter, subject) === 'denied');
  if (!denier) return { matches: kept, limiters: left };
  metrics.limiterDecision(denier.limiter.name, 'denied');
  metrics.nearLimit.refusal(route, denier.limiter.name, 'denied');
  return { matches: kept, limiters: left, denied: refusedAnswer(kept, denier.limiter, undefined) };
}
