import type { CompiledLimiter, CompiledRoute, RouteWindow } from '../rules/compile.js';

/** What a route counts in process when the store fails (onStoreError: local). */
export interface LocalPlan {
  /** The windows of its local limiters, in route order. */
  readonly windows: readonly RouteWindow[];
  /** Their indexes in the route's windows (and so in its planned requests). */
  readonly indexes: readonly number[];
  readonly limiters: readonly CompiledLimiter[];
  /** The route's other limiters (onStoreError: open): not counted. */
  readonly open: readonly CompiledLimiter[];
}

const plans = new WeakMap<CompiledRoute, LocalPlan | null>();

/**
 * The route's local plan, made once per compiled route (less the limiters an allow list exempted
 * the request from); undefined when no limiter of it is local.
 */
export function localPlan(
  route: CompiledRoute,
  exempt: readonly CompiledLimiter[] = [],
): LocalPlan | undefined {
  const plan = routePlan(route);
  if (!plan || exempt.length === 0) return plan;
  const indexes = plan.indexes.filter((i) => !exempt.includes(route.windows[i]!.limiter));
  if (indexes.length === 0) return undefined;
  return {
    windows: indexes.map((i) => route.windows[i]!),
    indexes,
    limiters: plan.limiters.filter((l) => !exempt.includes(l)),
    open: plan.open.filter((l) => !exempt.includes(l)),
  };
}

function routePlan(route: CompiledRoute): LocalPlan | undefined {
  let plan = plans.get(route);
  if (plan === undefined) {
    const local = (l: CompiledLimiter) => l.onStoreError === 'local';
    const indexes = route.windows.flatMap((w, i) => (local(w.limiter) ? [i] : []));
    plan =
      indexes.length === 0
        ? null
        : {
            windows: indexes.map((i) => route.windows[i]!),
            indexes,
            limiters: route.limiters.filter(local),
            open: route.limiters.filter((l) => !local(l)),
          };
    plans.set(route, plan);
  }
  return plan ?? undefined;
}
