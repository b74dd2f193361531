import { LRUCache } from 'lru-cache';
import {
  WrappingStore,
  type ResultTap,
  type WindowRequest,
  type WindowResult,
  type WindowStore,
} from './window-store.js';

interface SpentWindow {
  readonly limit: number;
  /** Until when the cache refuses: retryAtMs, or (fixed) resetAtMs. */
  readonly untilMs: number;
  /** The refusal the cache answers with, built once per entry (a result is only read, never written). */
  readonly result: WindowResult;
  /** The same, as a one-window request's answer (refusedNow). */
  readonly results: readonly WindowResult[];
}

/**
 * Remembers spent windows in process until the next request would pass (bounded LRU): a fixed
 * window until it resets, a sliding window or token bucket until its retry time (of a request of
 * cost 1, so one is cached only from a request of cost 1). Refuses requests that hit one without
 * asking the inner store: a flooding key costs no round trip. An entry applies only while the
 * limit is unchanged, so a reload that raises a limit takes effect at once.
 */
export class OverLimitCache extends WrappingStore {
  readonly #spent: LRUCache<string, SpentWindow>;
  /** The inner store shows this cache its answers (ResultTap). */
  readonly #tapped: boolean = false;

  constructor(
    inner: WindowStore,
    maxKeys: number,
    private readonly now: () => number = Date.now,
  ) {
    super(inner);
    this.#spent = new LRUCache({ max: maxKeys });
    // A store that shows its answers (the batching store) is told to show them here: a miss then
    // returns its promise as it is, with no then() of its own per request.
    const tappable = inner as Partial<ResultTap>;
    if (typeof tappable.tapResults === 'function') {
      tappable.tapResults((requests, results) => this.#remember(requests, results));
      this.#tapped = true;
    }
  }

  get size(): number {
    return this.#spent.size;
  }

  // Not async: a cache hit answers with one resolved promise, a miss adds one then() to the
  // inner store's promise (an async function would add its own promise and a tick to both).
  hit(requests: readonly WindowRequest[]): Promise<WindowResult[]> {
    const now = this.now();
    // One window (most routes): its cached refusal, with no per-window array besides the answer.
    if (requests.length === 1) {
      const spent = this.#cachedFor(requests[0]!, now);
      if (spent) return Promise.resolve([spent.result]);
      return this.#miss(requests);
    }
    let cached: (SpentWindow | undefined)[] | undefined;
    // Only when every window may be cached: a window the cache cannot speak for (a shadow limiter,
    // or overLimitCache: false) could change the answer (a later Retry-After, a shadow verdict).
    if (allCacheable(requests)) {
      for (let i = 0; i < requests.length; i++) {
        const spent = this.#cachedFor(requests[i]!, now);
        if (spent) (cached ??= [])[i] = spent;
      }
    }
    if (!cached) return this.#miss(requests);
    // Refused as the store would refuse it: nothing is counted. Windows not in the cache are
    // reported as untouched; the decision reports a spent window.
    const results: WindowResult[] = new Array(requests.length);
    for (let i = 0; i < requests.length; i++) {
      const r = requests[i]!;
      results[i] = cached[i]?.result ?? {
        count: 0,
        limit: r.limit,
        resetAtMs: now + r.periodMs,
        allowed: true,
      };
    }
    return Promise.resolve(results);
  }

  /**
   * What hit() would answer a one-window request the cache refuses, at once: no promise, no turn
   * of the microtask queue, no array. Undefined when hit() must be asked (a miss, or more windows).
   */
  refusedNow(requests: readonly WindowRequest[]): readonly WindowResult[] | undefined {
    if (requests.length !== 1) return undefined;
    return this.#cachedFor(requests[0]!, this.now())?.results;
  }

  /** The window's cached refusal, if it may answer for `r` now. */
  #cachedFor(r: WindowRequest, now: number): SpentWindow | undefined {
    if (!r.cacheWhenSpent) return undefined;
    const spent = this.#spent.get(r.key);
    return spent && spent.limit === r.limit && spent.untilMs > now ? spent : undefined;
  }

  #miss(requests: readonly WindowRequest[]): Promise<WindowResult[]> {
    if (this.#tapped) return this.inner.hit(requests);
    return this.inner.hit(requests).then((results) => this.#remember(requests, results));
  }

  /** Keeps the windows the store reported spent, and hands the results on. */
  #remember(requests: readonly WindowRequest[], results: WindowResult[]): WindowResult[] {
    for (let i = 0; i < results.length; i++) {
      const r = requests[i]!;
      const result = results[i]!;
      if (!r.cacheWhenSpent || result.count < r.limit) continue;
      const retryAtMs = result.retryAtMs;
      // Sliding and token bucket: only a cost-1 request's retry time is every request's.
      if (retryAtMs !== undefined && (r.cost ?? 1) !== 1) continue;
      const spent = spentResult(r.limit, result.resetAtMs, retryAtMs);
      this.#spent.set(r.key, {
        limit: r.limit,
        untilMs: retryAtMs ?? result.resetAtMs,
        result: spent,
        results: Object.freeze([spent]),
      });
    }
    return results;
  }

  override close(): Promise<void> {
    this.#spent.clear();
    return super.close();
  }
}

/** A spent window's answer: two literals, so a fixed window's carries no retryAtMs at all. */
function spentResult(limit: number, resetAtMs: number, retryAtMs: number | undefined): WindowResult {
  return retryAtMs === undefined
    ? { count: limit, limit, resetAtMs, allowed: false }
    : { count: limit, limit, resetAtMs, allowed: false, retryAtMs };
}

/**
 * The over-limit cache's answer to `requests` right now, when `store` is one and refuses them
 * from its entries (OverLimitCache.refusedNow); undefined otherwise: ask store.hit().
 */
export function refusedNow(
  store: WindowStore,
  requests: readonly WindowRequest[],
): readonly WindowResult[] | undefined {
  return store instanceof OverLimitCache ? store.refusedNow(requests) : undefined;
}

function allCacheable(requests: readonly WindowRequest[]): boolean {
  for (let i = 0; i < requests.length; i++) if (!requests[i]!.cacheWhenSpent) return false;
  return true;
}
