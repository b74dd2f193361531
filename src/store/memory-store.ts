import type { WindowRequest, WindowResult, WindowStore } from './window-store.js';

interface Window {
  count: number;
  resetAtMs: number;
}

export interface MemoryStoreOptions {
  readonly maxKeys: number;
  readonly sweepIntervalMs: number;
  readonly now?: () => number;
}

/**
 * Fixed windows in this process: the same semantics as the Redis store, for a single instance.
 * Memory is bounded: expired windows are swept, and past maxKeys the oldest windows are evicted.
 */
export class MemoryStore implements WindowStore {
  readonly #windows = new Map<string, Window>();
  readonly #maxKeys: number;
  readonly #now: () => number;
  readonly #sweeper: NodeJS.Timeout;

  constructor(options: MemoryStoreOptions) {
    this.#maxKeys = options.maxKeys;
    this.#now = options.now ?? Date.now;
    this.#sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs);
    this.#sweeper.unref();
  }

  get size(): number {
    return this.#windows.size;
  }

  async hit(requests: readonly WindowRequest[]): Promise<WindowResult[]> {
    const now = this.#now();
    const live = requests.map((r) => {
      const w = this.#windows.get(r.key);
      return w && w.resetAtMs > now ? w : undefined;
    });
    const blocked = requests.some((r, i) => r.enforce && (live[i]?.count ?? 0) >= r.limit);
    return requests.map((r, i) => {
      let w = live[i];
      const allowed = (w?.count ?? 0) < r.limit;
      if (!blocked) {
        if (!w) {
          w = { count: 0, resetAtMs: now + r.periodMs };
          this.#insert(r.key, w);
        }
        w.count++;
      }
      return { count: w?.count ?? 0, limit: r.limit, resetAtMs: w?.resetAtMs ?? now + r.periodMs, allowed };
    });
  }

  /** Drops expired windows. */
  sweep(): void {
    const now = this.#now();
    for (const [key, w] of this.#windows) if (w.resetAtMs <= now) this.#windows.delete(key);
  }

  async connect(): Promise<boolean> {
    return true;
  }

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#windows.clear();
  }

  #insert(key: string, w: Window): void {
    this.#windows.delete(key); // re-insert so Map order is creation order
    // Full: evict the oldest windows (Map order is creation order). No sweep here: a full scan
    // per new key would let a client who sends new keys make every request slow.
    if (this.#windows.size >= this.#maxKeys) {
      for (const oldest of this.#windows.keys()) {
        this.#windows.delete(oldest);
        if (this.#windows.size < this.#maxKeys) break;
      }
    }
    this.#windows.set(key, w);
  }
}
