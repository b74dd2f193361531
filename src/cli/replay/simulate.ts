/**
 * One config's what-if over a log: every request routed by the compiled rules, keyed by the
 * gateway's identity and key code (identityOf, planWindows), counted in a memory store on the
 * log's own clock and decided as the gateway decides. Nothing leaves the process.
 */
import type { WorkspaceTokenStore } from '../../credentials/workspace-token.js';
import { describePeer, type Peer } from '../../identity/peer.js';
import { identityOf, type IdentitySources } from '../../identity/resolve.js';
import { decide } from '../../limits/decision.js';
import { planWindows, type PartValues } from '../../limits/plan.js';
import { TrustedProxies } from '../../net/client-ip.js';
import { canonicalTarget } from '../../routing/request-target.js';
import type { CompiledLimiter, CompiledRoute, RuleTable } from '../../rules/compile.js';
import type { KeyPart } from '../../rules/model.js';
import { MemoryStore } from '../../store/memory-store.js';
import type { LogRecord } from './log-formats.js';

/** One key of one limiter: its requests, refusals and peak use of the limit (0..1, counted requests). */
export interface KeyStats {
  requests: number;
  refused: number;
  peak: number;
}

export interface LimiterStats {
  readonly limiter: CompiledLimiter;
  /** The key parts (keys are their hashed values, in this order, separated by spaces) that tell its keys apart: every part of every window, in order. */
  readonly parts: readonly KeyPart[];
  requests: number;
  /** Requests one of its windows was spent for: a 429 (a shadow limiter's: once enforced). */
  refused: number;
  readonly keys: Map<string, KeyStats>;
}

export interface RouteStats {
  readonly route: CompiledRoute;
  requests: number;
  /** Requests the gateway would refuse with 429. */
  refused: number;
  /** Requests only a shadow limiter would refuse. */
  shadowRefused: number;
}

/** Replayed logs carry no credential: a part the log lacks is keyed as the gateway keys a missing one. */
const MISSING_JWT = { ok: false, reason: 'missing' } as const;
const MISSING_TOKEN = { ok: false, reason: 'missing' } as const;
const NO_TOKENS: WorkspaceTokenStore = { verify: () => Promise.resolve(false) };
/** Bounds of the caches of peers and identities (cleared when full: a log's hot keys come back at once). */
const CACHE_MAX = 100_000;
/** Store keys held at most; expired windows are swept first (the store's own bound). */
const STORE_MAX_KEYS = 5_000_000;
const SWEEP_EVERY = 65_536;

export class Simulation {
  readonly routes = new Map<string, RouteStats>();
  readonly limiters = new Map<string, LimiterStats>();
  /** Requests no route matches (the gateway answers 404). */
  unrouted = 0;
  /** Requests keyed by a part the log does not carry, by part (keyed as if the part were missing). */
  readonly missing = new Map<KeyPart, number>();

  readonly #table: RuleTable;
  readonly #sources: IdentitySources;
  readonly #store: MemoryStore;
  #now = 0;
  #fed = 0;
  readonly #peers = new Map<string, Peer>();
  readonly #identities = new Map<string, ReadonlyMap<KeyPart, string>>();
  /** Per route: each limiter's windows, as a slice of the route's windows. */
  readonly #slices = new Map<CompiledRoute, { stats: LimiterStats; start: number; end: number }[]>();

  constructor(table: RuleTable) {
    this.#table = table;
    this.#sources = {
      // The logged address is the client's (a proxy in front logs its own real-IP result).
      trustedProxies: new TrustedProxies([]),
      ipv6PrefixLength: table.config.identity.ipv6PrefixLength,
      jwt: undefined,
      workspaceTokens: NO_TOKENS,
    };
    this.#store = new MemoryStore({
      maxKeys: STORE_MAX_KEYS,
      sweepIntervalMs: 3_600_000, // swept on the log's clock instead (feed)
      now: () => this.#now,
    });
    for (const route of table.routes) {
      this.routes.set(route.name, { route, requests: 0, refused: 0, shadowRefused: 0 });
      let start = 0;
      const slices = route.limiters.map((limiter) => {
        let stats = this.limiters.get(limiter.name);
        if (!stats) {
          const parts = [...new Set(limiter.windows.flatMap((w) => w.parts))];
          stats = { limiter, parts, requests: 0, refused: 0, keys: new Map() };
          this.limiters.set(limiter.name, stats);
        }
        const slice = { stats, start, end: start + limiter.windows.length };
        start = slice.end;
        return slice;
      });
      this.#slices.set(route, slices);
    }
  }

  /** Replays one request at `nowMs` (the caller keeps the clock from going back). */
  feed(rec: LogRecord, nowMs: number): void {
    this.#now = nowMs;
    if (++this.#fed % SWEEP_EVERY === 0) this.#store.sweep(nowMs);
    const target = canonicalTarget(rec.target);
    const route = this.#table.router.matchPath(rec.host, rec.method, target.matchPath);
    if (!route) {
      this.unrouted++;
      return;
    }
    const routeStats = this.routes.get(route.name)!;
    routeStats.requests++;
    if (route.windows.length === 0) return;
    const values = this.#values(route, rec);
    const results = this.#store.hitNow(planWindows(route.windows, values, '', nowMs));
    const decision = decide(route.windows, results, nowMs);
    if (!decision.allowed) routeStats.refused++;
    else if (decision.shadowLimited) routeStats.shadowRefused++;
    for (const { stats, start, end } of this.#slices.get(route)!) {
      let spent = false;
      let peak = 0;
      for (let i = start; i < end; i++) {
        const r = results[i]!;
        if (!r.allowed) spent = true;
        else if (r.count / r.limit > peak) peak = r.count / r.limit;
      }
      // The values alone, space-separated (a hash has no space): no string is built for one part.
      let key = values(stats.parts[0]!);
      for (let i = 1; i < stats.parts.length; i++) key += ` ${values(stats.parts[i]!)}`;
      let k = stats.keys.get(key);
      if (!k) stats.keys.set(key, (k = { requests: 0, refused: 0, peak: 0 }));
      stats.requests++;
      k.requests++;
      if (spent) {
        stats.refused++;
        k.refused++;
      } else if (peak > k.peak) k.peak = peak;
    }
  }

  async close(): Promise<void> {
    await this.#store.close();
  }

  /** The hashed value of each part the route needs: the log's own, else derived from what it has. */
  #values(route: CompiledRoute, rec: LogRecord): PartValues {
    const logged = rec.keys;
    let lacking = false;
    for (const p of route.parts) {
      if (logged?.[p] !== undefined) continue;
      lacking = true;
      // Derived from what the line has (the address, the user agent): not missing.
      if (p === 'ip' ? rec.client !== undefined : p === 'user_agent' && rec.userAgent !== undefined) continue;
      this.missing.set(p, (this.missing.get(p) ?? 0) + 1);
    }
    if (logged && !lacking) return (p) => logged[p]!;
    const cacheKey = `${route.name}\0${rec.client ?? ''}\0${logged ? '' : (rec.userAgent ?? '\0')}`;
    let derived = this.#identities.get(cacheKey);
    if (!derived) {
      const headers = rec.userAgent === undefined || logged ? {} : { 'user-agent': rec.userAgent };
      derived = identityOf(
        this.#sources,
        route.parts,
        this.#peer(rec.client ?? ''),
        headers,
        MISSING_JWT,
        MISSING_TOKEN,
      ).hashed;
      if (this.#identities.size >= CACHE_MAX) this.#identities.clear();
      this.#identities.set(cacheKey, derived);
    }
    const known = derived;
    return logged ? (p) => logged[p] ?? known.get(p)! : (p) => known.get(p)!;
  }

  #peer(client: string): Peer {
    let peer = this.#peers.get(client);
    if (!peer) {
      peer = describePeer(client, this.#sources);
      if (this.#peers.size >= CACHE_MAX) this.#peers.clear();
      this.#peers.set(client, peer);
    }
    return peer;
  }
}
