import type { Logger } from 'pino';
import { throttledWarn } from '../logger.js';
import type { Beat } from './local-fallback-heartbeat.js';
import { localRequest } from './local-fallback-share.js';
import { MemoryStore } from './memory-store.js';
import type { WindowRequest, WindowResult } from './window-store.js';

/** What the fallback reports (GatewayMetrics). */
export interface LocalFallbackObserver {
  /** Whether limiting is local now (the store lost). */
  fallbackActive(active: boolean): void;
  /** The live instances last learnt from the heartbeats. */
  liveInstances(instances: number): void;
}

export interface LocalFallbackOptions {
  /** Local windows kept at most (store.memory.maxKeys): past it the soonest to reset is evicted. */
  readonly maxKeys: number;
  readonly sweepIntervalMs: number;
  readonly logger?: Logger;
  readonly observer?: LocalFallbackObserver;
  /** A heartbeat in the shared store; absent (memory or a given store): one instance. */
  readonly beat?: Beat;
  /** How often the heartbeat runs. */
  readonly intervalMs?: number;
  readonly now?: () => number;
}

/** How often an instance beats; an instance is live while its last beat is younger than LIVE_MS. */
export const HEARTBEAT_MS = 2000;
export const LIVE_MS = 3 * HEARTBEAT_MS;

/**
 * `onStoreError: local`: while the store fails, the windows of such limiters are counted in this
 * process (a bounded memory store, the same algorithms), each at its share of the limit: the limit
 * divided by the live instances (localShare), which the heartbeats tell while the store answers,
 * and which is kept through an outage (1 when never learnt). The outage begins at the first
 * request counted here and ends at the store's next answer; each is logged once.
 */
export class LocalFallback {
  readonly #store: MemoryStore;
  readonly #logger: Logger | undefined;
  readonly #observer: LocalFallbackObserver | undefined;
  readonly #beat: Beat | undefined;
  readonly #intervalMs: number;
  readonly #warnBeat: ((fields: object) => void) | undefined;
  #instances = 1;
  #active = false;
  #beating = false;
  #timer: NodeJS.Timeout | undefined;
  #wanted: () => boolean = () => false;

  constructor(options: LocalFallbackOptions) {
    this.#store = new MemoryStore({
      maxKeys: options.maxKeys,
      sweepIntervalMs: options.sweepIntervalMs,
      now: options.now,
    });
    this.#logger = options.logger;
    this.#observer = options.observer;
    this.#beat = options.beat;
    this.#intervalMs = options.intervalMs ?? HEARTBEAT_MS;
    this.#warnBeat = options.logger && throttledWarn(options.logger, 'store heartbeat failed', 10_000);
    this.#observer?.liveInstances(1);
    this.#observer?.fallbackActive(false);
  }

  /** The live instances last learnt (1 when never learnt). */
  get instances(): number {
    return this.#instances;
  }

  /** True from the first request counted here until the store answers again. */
  get active(): boolean {
    return this.#active;
  }

  /** Local windows held now. */
  get size(): number {
    return this.#store.size;
  }

  /**
   * Beats now and every interval while `wanted()` (some limiter falls back locally), so the
   * instances learn each other only when the count is used: no key in the store otherwise.
   */
  start(wanted: () => boolean): void {
    this.#wanted = wanted;
    if (!this.#beat || this.#timer) return;
    this.#timer = setInterval(() => void this.beat(), this.#intervalMs);
    this.#timer.unref();
    void this.beat();
  }

  /** One heartbeat (skipped while one is in flight: a stalled store does not pile them up). */
  async beat(): Promise<void> {
    if (!this.#beat || this.#beating || !this.#wanted()) return;
    this.#beating = true;
    try {
      const instances = Math.max(1, await this.#beat());
      if (instances !== this.#instances) {
        this.#instances = instances;
        this.#observer?.liveInstances(instances);
      }
    } catch (err) {
      this.#warnBeat?.({ err: (err as Error).message, instances: this.#instances });
    } finally {
      this.#beating = false;
    }
  }

  /** Counts a request's windows here, each at its share of the limit; results carry the share. */
  hit(requests: readonly WindowRequest[]): Promise<WindowResult[]> {
    if (!this.#active) {
      this.#active = true;
      this.#observer?.fallbackActive(true);
      this.#logger?.warn(
        { instances: this.#instances },
        'rate-limit store lost: limiting locally, each onStoreError: local limit divided by the live instances',
      );
    }
    const n = this.#instances;
    return this.#store.hit(requests.map((r) => localRequest(r, n)));
  }

  /** The store answered a request: counting is back in the store. */
  storeAnswered(): void {
    if (!this.#active) return;
    this.#active = false;
    this.#observer?.fallbackActive(false);
    this.#logger?.info('rate-limit store back: limiting in the store again');
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#store.close();
  }
}
