/**
 * The charge after the response (config chargeAfter, countOnly): once the upstream's status and
 * headers are known, the deferred windows are charged in the store without refusing. Not awaited:
 * the response is never held for it; it joins the store's batch like any hit.
 */
import { chargeRequests, postCharges } from '../limits/charging.js';
import type { ResponseHook } from '../proxy/upstream-pool.js';
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
  r.limiting.store.hit(requests).catch((err: unknown) => {
    r.limiting.warnStore({ reqId: r.requestId, err: (err as Error).message, postCharge: true });
  });
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
