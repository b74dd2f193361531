import type { BanEntry, WindowRequest, WindowResult } from './window-store.js';

/**
 * The memory store's penalty boxes: the same semantics as the script's ban section
 * (ban-script.ts), for one process. Bounded: at most `maxKeys` bans and as many strike counters,
 * the oldest dropped first (Maps keep insertion order); expired entries go at each sweep.
 */
export class BanBook {
  /** Ban key → when the ban ends. */
  readonly #bans = new Map<string, number>();
  /** Strikes key → refusals counted, and when the count ends (`within` from the first). */
  readonly #strikes = new Map<string, { count: number; untilMs: number }>();

  constructor(private readonly maxKeys: number) {}

  /** Before counting: true when a live ban of one of the request's limiters blocks it. */
  blocks(requests: readonly WindowRequest[], now: number): boolean {
    for (const r of requests) {
      if (r.ban && (this.#bans.get(r.ban.key) ?? 0) > now) return true;
    }
    return false;
  }

  /**
   * After counting: marks the results of a banned request with its bans' ends, or counts the strike
   * of each limiter whose own windows refused a blocked request, banning at the `after`-th.
   */
  settle(
    requests: readonly WindowRequest[],
    results: WindowResult[],
    banned: boolean,
    blocked: boolean,
    now: number,
  ): void {
    for (let i = 0; i < requests.length; i++) {
      const ban = requests[i]!.ban;
      if (!ban) continue;
      if (banned) {
        const until = this.#bans.get(ban.key) ?? 0;
        if (until > now) results[i] = { ...results[i]!, bannedUntilMs: until };
        continue;
      }
      if (!blocked || !results.slice(i, i + ban.span).some((r) => !r.allowed)) continue;
      let strikes = this.#strikes.get(ban.strikesKey);
      if (!strikes || strikes.untilMs <= now) {
        this.#strikes.delete(ban.strikesKey);
        strikes = { count: 0, untilMs: now + ban.withinMs };
        bounded(this.#strikes, this.maxKeys);
        this.#strikes.set(ban.strikesKey, strikes);
      }
      if (++strikes.count >= ban.after) {
        this.#strikes.delete(ban.strikesKey);
        this.#bans.delete(ban.key);
        bounded(this.#bans, this.maxKeys);
        this.#bans.set(ban.key, now + ban.forMs);
        results[i] = { ...results[i]!, banStarted: true };
      }
    }
  }

  list(prefix: string, max: number, now: number): { bans: BanEntry[]; truncated: boolean } {
    const bans: BanEntry[] = [];
    for (const [key, untilMs] of this.#bans) {
      if (untilMs <= now || !key.startsWith(prefix)) continue;
      if (bans.length === max) return { bans, truncated: true };
      bans.push({ key, untilMs });
    }
    return { bans, truncated: false };
  }

  lift(key: string, strikesKey: string, now: number): boolean {
    const live = (this.#bans.get(key) ?? 0) > now;
    this.#bans.delete(key);
    this.#strikes.delete(strikesKey);
    return live;
  }

  sweep(now: number): void {
    for (const [key, until] of this.#bans) if (until <= now) this.#bans.delete(key);
    for (const [key, s] of this.#strikes) if (s.untilMs <= now) this.#strikes.delete(key);
  }

  clear(): void {
    this.#bans.clear();
    this.#strikes.clear();
  }
}

/** Makes room for one more entry: drops the oldest while the Map is full. */
function bounded(map: Map<string, unknown>, max: number): void {
  while (map.size >= max) {
    const oldest = map.keys().next().value;
    if (oldest === undefined) return;
    map.delete(oldest);
  }
}
