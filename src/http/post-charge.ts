/**
 * The charge after the response (config chargeAfter, countOnly): once the upstream's status and
 * headers are known, the deferred windows are charged in the store without refusing. Not awaited:
 * the response is never held for it; it joins the store's batch like any hit.
 */
import { chargeRequests, postCharges, reportedCost } from '../limits/charging.js';
import type { ResponseHook } from '../proxy/upstream-pool.js';
import type { CompiledLimiter, RouteWindow } from '../rules/compile.js';
import { atTurnEnd } from '../store/turn-end.js';
import type { WindowRequest, WindowResult, WindowStore } from '../store/window-store.js';
import type { RoutedContext } from './context.js';
import type { DeferredCharge } from './count-request.js';

/** Charges the deferred windows of a request for a response of `status`. */
export function postCharge(
  r: RoutedContext,
  deferred: DeferredCharge,
  status: number,
  headers: Readonly<Record<string, string | string[] | undefined>> = {},
): void {
  const { charges, problems } = postCharges(deferred.windows, deferred.costs, status, headers);
  if (r.state.table.config.log.keyParts) r.charged = reportedCharge(deferred.windows, headers);
  for (const p of problems) r.limiting.warnCharge?.({ reqId: r.requestId, ...p });
  if (!anyCharge(charges)) return;
  let batch = batches.get(r.limiting.store);
  if (!batch) batches.set(r.limiting.store, (batch = new ChargeBatch(r.limiting.store)));
  batch.add({ r, deferred, charges });
}

/**
 * The access log's `charged` (log.keyParts): the cost the upstream reported in the first chargeAfter
 * header, as it is charged (0 when missing or garbled, at most `max`), whatever the status; replay
 * reads it back as that header's value.
 */
function reportedCharge(
  windows: readonly RouteWindow[],
  headers: Readonly<Record<string, string | string[] | undefined>>,
): number | undefined {
  for (const w of windows) {
    const c = w.limiter.charging;
    if (c?.deferred && c.afterHeader !== undefined)
      return reportedCost(headers[c.afterHeader], c.afterMax).cost;
  }
  return undefined;
}

function anyCharge(charges: readonly number[]): boolean {
  for (let i = 0; i < charges.length; i++) if (charges[i]! > 0) return true;
  return false;
}

export interface Pending {
  readonly r: RoutedContext;
  readonly deferred: DeferredCharge;
  readonly charges: readonly number[];
}

/** One window charge of a pending request: where its key's summed request is, and its share. */
interface Share {
  readonly pending: Pending;
  readonly limiter: CompiledLimiter;
  readonly slot: number;
  /** The costs charged on the same key before this one, in arrival order. */
  readonly before: number;
  readonly cost: number;
}

const batches = new WeakMap<WindowStore, ChargeBatch>();

/**
 * The post-charges of one event-loop turn, sent together: one request per window key with the
 * costs summed (a hot key's charges cost the store one key operation a turn, not one each). Held
 * for one turn at most; the pending list holds only that turn's charges.
 */
export class ChargeBatch {
  #pending: Pending[] = [];

  constructor(private readonly store: WindowStore) {}

  add(p: Pending): void {
    // Gathered before the turn's store batch is sent: the charges ride in the same store call.
    if (this.#pending.push(p) === 1) atTurnEnd('gather', this.#onTurnEnd);
  }

  readonly #onTurnEnd = (): void => this.#flush();

  #flush(): void {
    const pending = this.#pending;
    this.#pending = [];
    const requests: WindowRequest[] = [];
    const slots = new Map<string, number>();
    const shares: Share[] = [];
    for (const p of pending) {
      const charged = chargeRequests(p.deferred.planned, p.charges);
      let k = 0;
      for (let i = 0; i < p.charges.length; i++) {
        if (!(p.charges[i]! > 0)) continue;
        const request = charged[k++]!;
        // Same key and the same limits (a tier changes them, not the key): one summed request.
        const id = `${request.key} ${request.limit} ${request.rate ?? ''}`;
        let slot = slots.get(id);
        let before = 0;
        if (slot === undefined) {
          slots.set(id, (slot = requests.length));
          requests.push(request);
        } else {
          before = requests[slot]!.cost ?? 1;
          // chargeRequests made it for this flush alone: summed in place.
          (requests[slot] as { cost?: number }).cost = before + request.cost!;
        }
        shares.push({
          pending: p,
          limiter: p.deferred.windows[i]!.limiter,
          slot,
          before,
          cost: request.cost!,
        });
      }
    }
    const first = pending[0]!.r;
    this.store.hit(requests).then(
      (results) => auditOvershoot(requests, shares, results),
      (err: unknown) => {
        first.limiting.warnStore({ err: (err as Error).message, postCharge: true, requests: pending.length });
      },
    );
  }
}

/**
 * tollgate_admitted_over_limit_total: a charge that found its window without room (the request
 * was admitted on the check before forwarding, then cost more than was left), once per limiter
 * and request. A key's charges are taken in arrival order, as the store would have taken them one
 * by one. Shadow limiters never hold anyone to their limit: not counted.
 */
function auditOvershoot(
  requests: readonly WindowRequest[],
  shares: readonly Share[],
  results: readonly WindowResult[],
): void {
  let counted: Share | undefined;
  for (const share of shares) {
    const result = results[share.slot]!;
    const startCount = result.count - (requests[share.slot]!.cost ?? 1);
    if (startCount + share.before + share.cost <= result.limit || share.limiter.shadow) continue;
    if (counted?.pending === share.pending && counted.limiter === share.limiter) continue;
    counted = share;
    share.pending.r.limiting.metrics.admittedOverLimit(share.limiter.name);
  }
}

/** The hook that charges once the upstream answers, and strips the route's chargeAfter headers. */
export function postChargeHook(r: RoutedContext, deferred: DeferredCharge): PostChargeHook {
  return new PostChargeHook(r, deferred);
}

/** A class, not a literal with a closure: one small object per request, its method shared. */
export class PostChargeHook implements ResponseHook {
  fired = false;
  readonly strip: readonly string[];

  constructor(
    private readonly r: RoutedContext,
    private readonly deferred: DeferredCharge,
  ) {
    this.strip = r.route.chargeHeaders ?? NO_HEADERS;
  }

  onResponse(status: number, headers: Readonly<Record<string, string | string[] | undefined>>): void {
    this.fired = true;
    postCharge(this.r, this.deferred, status, headers);
  }
}

const NO_HEADERS: readonly string[] = [];
