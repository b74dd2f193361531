import { LRUCache } from 'lru-cache';
import { WrappingStore, type WindowRequest, type WindowResult, type WindowStore } from './window-store.js';

interface SpentWindow {
  readonly limit: number;
  readonly resetAtMs: number;
}

/**
 * Remembers spent windows in process until they reset (bounded LRU), and refuses requests that
 * hit one without asking the inner store: a flooding key costs no round trip. An entry applies
 * only while the limit is unchanged, so a reload that raises a limit takes effect at once.
 */
export class OverLimitCache extends WrappingStore {
  readonly #spent: LRUCache<string, SpentWindow>;

  constructor(
    inner: WindowStore,
    maxKeys: number,
    private readonly now: () => number = Date.now,
  ) {
    super(inner);
    this.#spent = new LRUCache({ max: maxKeys });
  }

  get size(): number {
    return this.#spent.size;
  }

  // Not async: a cache hit answers with one resolved promise, a miss adds one then() to the
  // inner store's promise (an async function would add its own promise and a tick to both).
  hit(requests: readonly WindowRequest[]): Promise<WindowResult[]> {
    const now = this.now();
    let cached: (SpentWindow | undefined)[] | undefined;
    // Only when every window may be cached: a window the cache cannot speak for (a shadow limiter,
    // or overLimitCache: false) could change the answer (a later Retry-After, a shadow verdict).
    if (allCacheable(requests)) {
      for (let i = 0; i < requests.length; i++) {
        const r = requests[i]!;
        const spent = this.#spent.get(r.key);
        if (spent && spent.limit === r.limit && spent.resetAtMs > now) (cached ??= [])[i] = spent;
      }
    }
    if (cached) {
      // Refused as the store would refuse it: nothing is counted. Windows not in the cache are
      // reported as untouched; the decision reports a spent window.
      const results: WindowResult[] = new Array(requests.length);
      for (let i = 0; i < requests.length; i++) {
        const r = requests[i]!;
        const spent = cached[i];
        results[i] = spent
          ? { count: r.limit, limit: r.limit, resetAtMs: spent.resetAtMs, allowed: false }
          : { count: 0, limit: r.limit, resetAtMs: now + r.periodMs, allowed: true };
      }
      return Promise.resolve(results);
    }
    return this.inner.hit(requests).then((results) => this.#remember(requests, results));
  }

  /** Keeps the windows the store reported spent, and hands the results on. */
  #remember(requests: readonly WindowRequest[], results: WindowResult[]): WindowResult[] {
    for (let i = 0; i < results.length; i++) {
      const r = requests[i]!;
      const result = results[i]!;
      if (r.cacheWhenSpent && result.count >= r.limit) {
        this.#spent.set(r.key, { limit: r.limit, resetAtMs: result.resetAtMs });
      }
    }
    return results;
  }

  override close(): Promise<void> {
    this.#spent.clear();
    return super.close();
  }
}

function allCacheable(requests: readonly WindowRequest[]): boolean {
  for (let i = 0; i < requests.length; i++) if (!requests[i]!.cacheWhenSpent) return false;
  return true;
}
