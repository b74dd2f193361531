import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import type { UpstreamPool } from '../proxy/upstream-pool.js';

/**
 * How long a pool a reload replaced stays open. A request that took the old table may not have
 * reached its upstream yet (it may be waiting on the store): the longer drain timeout plus the
 * store's batch window and command timeout, twice, covers it.
 */
export function retirementGraceMs(old: GatewayConfig, next: GatewayConfig): number {
  const store = old.store.redis;
  return (
    Math.max(old.shutdown.drainTimeout, next.shutdown.drainTimeout) +
    2 * (store.batchWindow + store.commandTimeout)
  );
}

/** Upstream pools a reload replaced: closed after their grace period, or at once on shutdown. */
export class PoolRetirement {
  readonly #retired = new Set<UpstreamPool>();
  readonly #timers = new Set<NodeJS.Timeout>();

  constructor(private readonly logger: Logger) {}

  retire(pools: readonly UpstreamPool[], graceMs: number): void {
    if (pools.length === 0) return;
    for (const p of pools) this.#retired.add(p);
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      for (const p of pools) this.#retired.delete(p);
      closePools(pools).catch((err: unknown) => this.logger.warn({ err }, 'closing old upstream pools'));
    }, graceMs);
    timer.unref();
    this.#timers.add(timer);
  }

  /** Shutdown, after the drain: destroys every pool still waiting, now (no client is left to answer). */
  async closeAll(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    const pools = [...this.#retired];
    this.#retired.clear();
    await destroyPools(pools);
  }
}

export async function closePools(pools: Iterable<UpstreamPool>): Promise<void> {
  await Promise.all([...pools].map((p) => p.close()));
}

/**
 * Shutdown, after the drain: an upstream request still open then has lost its client, and a
 * graceful close would wait for it forever (undici's close waits for every request it carries).
 */
export async function destroyPools(pools: Iterable<UpstreamPool>): Promise<void> {
  await Promise.all([...pools].map((p) => p.destroy()));
}
