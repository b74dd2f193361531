/**
 * The charge after the response (config chargeAfter, countOnly): once the upstream's status and
 * headers are known, the deferred windows are charged in the store without refusing. Not awaited:
 * the response is never held for it; it joins the store's batch like any hit.
 */
import { chargeRequests, postCharges } from '../limits/charging.js';
import type { ResponseHook } from '../proxy/upstream-pool.js';
import type { CompiledLimiter } from '../rules/compile.js';
import type { WindowResult } from '../store/window-store.js';
import type { RoutedContext } from './request-context.js';
import type { DeferredCharge } from './count-request.js';

/** Charges the deferred windows of a request for a response of `status`. */
export function postCharge(
  r: RoutedContext,
  deferred: DeferredCharge,
  status: number,
  headers: Readonly<Record<string, string | string[] | undefined>> = {},
): void {
  const { charges, problems } = postCharges(deferred.windows, deferred.costs, status, headers);
  for (const p of problems) r.limiting.warnCharge?.({ reqId: r.requestId, ...p });
  const requests = chargeRequests(deferred.planned, charges);
  if (requests.length === 0) return;
  r.limiting.store.hit(requests).then(
    (results) => auditOvershoot(r, deferred, charges, results),
    (err: unknown) => {
      r.limiting.warnStore({ reqId: r.requestId, err: (err as Error).message, postCharge: true });
    },
  );
}

/**
 * tollgate_admitted_over_limit_total: a charge that found its window without room (the request
 * was admitted on the check before forwarding, then cost more than was left), once per limiter.
 * Shadow limiters never hold anyone to their limit: not counted.
 */
function auditOvershoot(
  r: RoutedContext,
  deferred: DeferredCharge,
  charges: readonly number[],
  results: readonly WindowResult[],
): void {
  let k = 0;
  let last: CompiledLimiter | undefined;
  for (let i = 0; i < charges.length; i++) {
    if (!(charges[i]! > 0)) continue; // chargeRequests leaves it out
    const limiter = deferred.windows[i]!.limiter;
    if (results[k++]!.allowed || limiter.shadow || limiter === last) continue;
    last = limiter;
    r.limiting.metrics.admittedOverLimit(limiter.name);
  }
}

/** The hook that charges once the upstream answers, and strips the route's chargeAfter headers. */
export function postChargeHook(
  r: RoutedContext,
  deferred: DeferredCharge,
): ResponseHook & { fired: boolean } {
  const hook = {
    fired: false,
    strip: r.route.chargeHeaders ?? [],
    onResponse(status: number, headers: Readonly<Record<string, string | string[] | undefined>>) {
      hook.fired = true;
      postCharge(r, deferred, status, headers);
    },
  };
  return hook;
}
