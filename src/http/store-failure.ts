import type { CompiledRoute } from '../rules/compile.js';
import type { RequestIdentity } from '../identity/resolve.js';
import { decide } from '../limits/decision.js';
import { planWindows } from '../limits/plan.js';
import type { Refusal } from '../limits/refusal.js';
import type { LocalFallback } from '../store/local-fallback.js';
import type { WindowRequest } from '../store/window-store.js';
import { counted, type Counted, type Limiting, type Planned } from './counted.js';
import { localPlan, type LocalPlan } from './local-plan.js';
import { verdictsOf, type Lists, type WindowVerdict } from './verdicts.js';

const UNAVAILABLE: Refusal = {
  status: 503,
  decision: 'store_error',
  code: 'rate_limit_unavailable',
  message: 'Rate limiting is temporarily unavailable. Please retry shortly.',
};

/**
 * The store failed: the route's onStoreError: local limiters are counted in process, the request
 * refused 503 when the route fails closed, else let through uncounted.
 */
export async function storeFailed(p: Planned, err: unknown): Promise<Counted> {
  const { c, identity, windows, requests, nowMs, lists, tier } = p;
  const { limiting: lim, state, route } = c;
  lim.warnStore({ reqId: c.requestId, err: (err as Error).message });
  const local = route.failsClosed || !lim.fallback ? undefined : localPlan(route, lists.exempt);
  if (local) {
    // The local plan indexes the route's windows: plan them all when the lists left some out.
    const all =
      windows === route.windows
        ? requests
        : planWindows(route.windows, (part) => identity.hashed.get(part)!, state.keyPrefix, nowMs);
    const result = await countLocally(lim, lim.fallback!, route, local, all, identity, lists);
    return tier ? { ...result, tier } : result;
  }
  const verdicts = route.limiters.map((l): WindowVerdict =>
    lists.exempt.includes(l) ? 'exempt' : 'store_error',
  );
  if (route.failsClosed)
    return { identity, outcome: 'store_error', report: undefined, refusal: UNAVAILABLE, verdicts, tier };
  lim.metrics.uncounted();
  return { identity, outcome: 'store_error', report: undefined, refusal: undefined, verdicts, tier };
}

/**
 * The store failed and the route's limiters fail locally or open: the windows of its
 * onStoreError: local limiters are counted in process (each at its share of the limit) and
 * decided as usual; the open ones' are not counted (their verdict: store_error).
 */
async function countLocally(
  lim: Limiting,
  fallback: LocalFallback,
  route: CompiledRoute,
  plan: LocalPlan,
  requests: readonly WindowRequest[],
  identity: RequestIdentity,
  lists: Lists,
): Promise<Counted> {
  const hits = plan.indexes.map((i) => requests[i]!);
  const results = await fallback.hit(hits);
  const decision = decide(plan.windows, results, Date.now());
  lim.metrics.nearLimit.observe(route.name, plan.windows, hits, results, decision.blockedBy);
  const verdicts = verdictsOf(route, plan.windows, results, decision.blockedBy, lists, plan.limiters);
  route.limiters.forEach((limiter, i) => {
    const verdict = verdicts[i]!;
    if (verdict === 'allowed' || verdict === 'limited' || verdict === 'shadow_limited') {
      lim.metrics.localDecision(limiter.name, verdict);
    }
  });
  return counted(identity, decision, verdicts);
}
