/**
 * One config's what-if over a log: every request routed by the compiled rules, keyed by the
 * gateway's identity and key code (identityOf, planWindows), screened, tiered and priced by the
 * gateway's policy functions, counted in replay's store (the memory store's maths) on the log's
 * clock and decided as the gateway decides (countRequest's steps, in its order; decide's verdict
 * read by verdict.ts, without the headers' report). Nothing leaves the process.
 */
import type { WorkspaceTokenStore } from '../../credentials/workspace-token.js';
import { describePeer, type Peer } from '../../identity/peer.js';
import { identityOf, type IdentitySources } from '../../identity/resolve.js';
import { bannedBy, bansStarted } from '../../limits/ban.js';
import {
  admissionRequests,
  admissionResults,
  chargeRequests,
  postCharges,
  windowCosts,
} from '../../limits/charging.js';
import { hasLists, screen } from '../../limits/exemption.js';
import { OverrideTable } from '../../limits/overrides.js';
import { planWindows, type PartValues } from '../../limits/plan.js';
import { TrustedProxies } from '../../net/client-ip.js';
import { canonicalTarget } from '../../routing/request-target.js';
import type { CompiledLimiter, CompiledRoute, RuleTable } from '../../rules/compile.js';
import type { KeyPart, RouteWindow } from '../../rules/model.js';
import type { WindowRequest, WindowResult } from '../../store/window-store.js';
import type { LogRecord } from './log-formats.js';
import {
  chargedHeaders,
  listSubjectOf,
  pricedRequest,
  tierApplies,
  tierLabel,
  tierOfRecord,
  Warnings,
  type TierSources,
} from './policies.js';
import { ReplayStore, type ReplayWindows, type Slot } from './replay-store.js';
import { verdict } from './verdict.js';

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
  /** Requests counted in its windows. */
  requests: number;
  /** Requests one of its windows was spent for: a 429 (a shadow limiter's: once enforced). */
  refused: number;
  /** Requests its allow list (or an override of `unlimited`) let by uncounted. */
  exempt: number;
  /** Requests its deny list answered 403 (a shadow limiter's: would have). */
  denied: number;
  /** Requests its ban answered 429, and the bans its refusals started. */
  banned: number;
  bansStarted: number;
  readonly keys: Map<string, KeyStats>;
}

export interface RouteStats {
  readonly route: CompiledRoute;
  requests: number;
  /** Requests the gateway would refuse with 429 for a spent window. */
  refused: number;
  /** Requests only a shadow limiter would refuse. */
  shadowRefused: number;
  /** 429 for a ban, 403 for a deny list, 411 for a body-priced request of unknown size. */
  banned: number;
  denied: number;
  lengthRequired: number;
  /** Requests by tier (on a route whose tier is chosen): "default", "pro (jwt)", "unlimited (override)". */
  readonly tiers: Map<string, number>;
}

/** Replayed logs carry no credential: a part the log lacks is keyed as the gateway keys a missing one. */
const MISSING_JWT = { ok: false, reason: 'missing' } as const;
const MISSING_TOKEN = { ok: false, reason: 'missing' } as const;
const NO_TOKENS: WorkspaceTokenStore = { verify: () => Promise.resolve(false) };
/** Bounds of the caches of peers and keyed requests (cleared when full: a log's hot keys come back at once). */
const CACHE_MAX = 100_000;
/** Store keys held at most; expired windows are swept first (the store's own bound). */
const STORE_MAX_KEYS = 5_000_000;
const SWEEP_EVERY = 65_536;

/**
 * A request's keys on one route, made once per client: the values of its parts, its key in each
 * limiter's statistics and its store requests for the route's windows. Reused, the same strings
 * reach the Maps again and again (their hashes are kept), and nothing is built per request.
 */
interface Keyed {
  readonly values: PartValues;
  /** Per limiter of the route (in route order): the key its statistics use, and its entry there. */
  readonly statKeys: readonly string[];
  readonly keyStats: KeyStats[];
  /** planWindows(route.windows, …); undefined on a route with calendar windows (their keys move). */
  readonly planned: readonly WindowRequest[] | undefined;
  /** The store's slots of `planned`, index by index (filled by the store). */
  readonly slots: (Slot | undefined)[];
}

/** Keyed requests found by what their keys are made from: a level per value, the last holds them. */
type KeyLevel = Map<string | undefined, unknown>;

/** What feed needs of a route, made once. */
interface RouteInfo {
  readonly routeStats: RouteStats;
  /** Its limiters' statistics, in route order. */
  readonly stats: readonly LimiterStats[];
  /** Some window is a calendar one: its keys depend on the time (not cached). */
  readonly calendar: boolean;
  readonly lists: boolean;
  readonly bans: boolean;
  /** route.parts as an array: walked twice a request, without an iterator. */
  readonly parts: readonly KeyPart[];
  /** Keyed requests by the logged hashes (then, where one lacks, the address); by address and user agent. */
  readonly byLogged: KeyLevel;
  readonly byRaw: KeyLevel;
}

export class Simulation {
  readonly routes = new Map<string, RouteStats>();
  readonly limiters = new Map<string, LimiterStats>();
  /** Requests no route matches (the gateway answers 404). */
  unrouted = 0;
  /** Requests keyed by a part the log does not carry, by part (keyed as if the part were missing). */
  readonly missing = new Map<KeyPart, number>();
  /** Policy fields lines lacked, by limiter and field. */
  readonly warnings = new Warnings();

  readonly #table: RuleTable;
  readonly #sources: IdentitySources;
  readonly #tiers: TierSources;
  readonly #store: ReplayWindows;
  #now = 0;
  #fed = 0;
  readonly #peers = new Map<string, Peer>();
  /** Keyed requests cached (in the routes' levels), cleared when CACHE_MAX. */
  #keyedCount = 0;
  /** Per route: its limiters' statistics, and whether its windows' keys depend on the time. */
  readonly #routeInfo = new Map<CompiledRoute, RouteInfo>();

  /** `windows`: the store to count in (tests compare the replay's store with the gateway's). */
  constructor(
    table: RuleTable,
    overrides: OverrideTable = OverrideTable.EMPTY,
    windows: (now: () => number) => ReplayWindows = (now) =>
      new ReplayStore({ maxKeys: STORE_MAX_KEYS, now }),
  ) {
    this.#table = table;
    const config = table.config;
    this.#sources = {
      // The logged address is the client's (a proxy in front logs its own real-IP result).
      trustedProxies: new TrustedProxies([]),
      ipv6PrefixLength: config.identity.ipv6PrefixLength,
      jwt: undefined,
      workspaceTokens: NO_TOKENS,
    };
    this.#tiers = {
      jwt: config.tiers.jwt !== undefined,
      workspaceTokenPlan: config.tiers.workspaceTokenPlan,
      overrides,
    };
    this.#store = windows(() => this.#now);
    for (const route of table.routes) {
      const routeStats: RouteStats = {
        route,
        requests: 0,
        refused: 0,
        shadowRefused: 0,
        banned: 0,
        denied: 0,
        lengthRequired: 0,
        tiers: new Map(),
      };
      this.routes.set(route.name, routeStats);
      const stats = route.limiters.map((limiter) => {
        let s = this.limiters.get(limiter.name);
        if (!s) {
          const parts = [...new Set(limiter.windows.flatMap((w) => w.parts))];
          s = {
            limiter,
            parts,
            requests: 0,
            refused: 0,
            exempt: 0,
            denied: 0,
            banned: 0,
            bansStarted: 0,
            keys: new Map(),
          };
          this.limiters.set(limiter.name, s);
        }
        return s;
      });
      this.#routeInfo.set(route, {
        routeStats,
        stats,
        calendar: route.windows.some((w) => !!w.window.calendar),
        lists: hasLists(route.limiters),
        bans: route.limiters.some((l) => l.ban !== undefined),
        parts: [...route.parts],
        byLogged: new Map(),
        byRaw: new Map(),
      });
    }
  }

  /** Replays one request at `nowMs` (the caller keeps the clock from going back). */
  feed(rec: LogRecord, nowMs: number): void {
    this.#now = nowMs;
    if (++this.#fed % SWEEP_EVERY === 0) this.#store.sweep(nowMs);
    const route = this.#table.router.matchPath(rec.host, rec.method, matchPathOf(rec.target));
    if (!route) {
      this.unrouted++;
      return;
    }
    const info = this.#routeInfo.get(route)!;
    const routeStats = info.routeStats;
    routeStats.requests++;
    if (route.windows.length === 0) return;
    const keyed = this.#keys(route, rec, info);
    // Tiers and overrides: the windows at the request's tier (none for `unlimited`).
    let windows = route.windows;
    if (tierApplies(this.#tiers, route)) {
      const tier = tierOfRecord(this.#tiers, route, rec, this.#peer(rec.client ?? ''), this.warnings);
      const label = tierLabel(tier.choice);
      routeStats.tiers.set(label, (routeStats.tiers.get(label) ?? 0) + 1);
      windows = tier.windows;
      if (windows.length === 0) {
        for (const s of info.stats) s.exempt++;
        return;
      }
    }
    // Allow and deny lists: denied, 403 before anything is counted; exempt limiters left out.
    let exempt: readonly CompiledLimiter[] = [];
    if (info.lists) {
      const peer = this.#peer(rec.client ?? '');
      const s = screen(route.limiters, windows, listSubjectOf(route.limiters, rec, peer, this.warnings));
      for (const l of s.shadowDenied) this.limiters.get(l.name)!.denied++;
      if (s.deniedBy) {
        routeStats.denied++;
        this.limiters.get(s.deniedBy.name)!.denied++;
        return;
      }
      exempt = s.exempt;
      for (const l of exempt) this.limiters.get(l.name)!.exempt++;
      if (exempt.length === route.limiters.length) return;
      windows = s.windows;
    }
    const planned =
      windows === route.windows && keyed.planned
        ? keyed.planned
        : planWindows(windows, keyed.values, '', nowMs);
    // Weighted cost: checked (and, unless deferred, charged) now; deferred ones after the response.
    let costs: number[] | undefined;
    if (route.charged) {
      costs = windowCosts(windows, pricedRequest(windows, rec, this.warnings));
      if (!costs) {
        routeStats.lengthRequired++;
        return;
      }
    }
    // The keyed requests' slots serve their admission requests too (the same keys, index by index).
    const slots = planned === keyed.planned ? keyed.slots : undefined;
    let results = this.#store.hitNow(costs ? admissionRequests(windows, planned, costs) : planned, slots);
    if (costs) results = admissionResults(windows, costs, results);
    const ban = bannedBy(windows, results, nowMs);
    if (ban) {
      routeStats.banned++;
      this.limiters.get(ban.limiter.name)!.banned++;
      return;
    }
    const decision = verdict(windows, results);
    if (decision === 'refused') routeStats.refused++;
    else if (decision === 'shadow-refused') routeStats.shadowRefused++;
    if (info.bans) for (const name of bansStarted(windows, results)) this.limiters.get(name)!.bansStarted++;
    this.#count(route, info.stats, keyed, windows, results, exempt);
    if (decision !== 'refused' && route.deferred && costs) {
      const headers = chargedHeaders(windows, rec, this.warnings);
      const { charges } = postCharges(windows, costs, rec.status ?? 0, headers);
      const charged = chargeRequests(planned, charges);
      if (charged.length > 0) this.#store.hitNow(charged);
    }
  }

  async close(): Promise<void> {
    await this.#store.close();
  }

  /** Each limiter's statistics for a request its windows counted (or refused). */
  #count(
    route: CompiledRoute,
    stats: readonly LimiterStats[],
    keyed: Keyed,
    windows: readonly RouteWindow[],
    results: readonly WindowResult[],
    exempt: readonly CompiledLimiter[],
  ): void {
    // A limiter's windows are adjacent in the route's windows (and in a tier's, or a list's subset).
    let i = 0;
    for (let l = 0; l < route.limiters.length; l++) {
      const limiter = route.limiters[l]!;
      if (exempt.length > 0 && exempt.includes(limiter)) continue;
      let spent = false;
      let peak = 0;
      for (; i < windows.length && windows[i]!.limiter === limiter; i++) {
        const r = results[i]!;
        if (!r.allowed) spent = true;
        else if (r.count / r.limit > peak) peak = r.count / r.limit;
      }
      const s = stats[l]!;
      let k = keyed.keyStats[l];
      if (!k) {
        const key = keyed.statKeys[l]!;
        k = s.keys.get(key);
        if (!k) s.keys.set(key, (k = { requests: 0, refused: 0, peak: 0 }));
        keyed.keyStats[l] = k;
      }
      s.requests++;
      k.requests++;
      if (spent) {
        s.refused++;
        k.refused++;
      } else if (peak > k.peak) k.peak = peak;
    }
  }

  /**
   * The request's keys on the route: made for its first request, then found by what they are
   * made from (the logged hashes, else the client's address and user agent).
   */
  #keys(route: CompiledRoute, rec: LogRecord, info: RouteInfo): Keyed {
    const { parts } = info;
    const logged = rec.keys;
    let lacking = false;
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (logged?.[p] !== undefined) continue;
      lacking = true;
      // Derived from what the line has (the address, the user agent): not missing.
      if (p === 'ip' ? rec.client !== undefined : p === 'user_agent' && rec.userAgent !== undefined) continue;
      this.missing.set(p, (this.missing.get(p) ?? 0) + 1);
    }
    if (this.#keyedCount >= CACHE_MAX) {
      for (const i of this.#routeInfo.values()) {
        i.byLogged.clear();
        i.byRaw.clear();
      }
      this.#keyedCount = 0;
    }
    // Found by the logged hashes (then, where one lacks, the address: the rest is derived from it
    // alone), else by the address and user agent: a Map level per value, no string made per line.
    let level: KeyLevel;
    let last: string | undefined;
    if (logged) {
      level = info.byLogged;
      const n = parts.length;
      for (let i = 0; i < n - 1; i++) level = sublevel(level, logged[parts[i]!]);
      if (lacking) {
        if (n > 0) level = sublevel(level, logged[parts[n - 1]!]);
        last = rec.client;
      } else last = n > 0 ? logged[parts[n - 1]!] : undefined;
    } else {
      level = sublevel(info.byRaw, rec.client);
      last = rec.userAgent;
    }
    let keyed = level.get(last) as Keyed | undefined;
    if (!keyed) {
      const values = logged && !lacking ? (p: KeyPart) => logged[p]! : this.#derived(route, rec);
      const known = new Map<KeyPart, string>();
      for (const p of parts) known.set(p, values(p));
      const fixed: PartValues = (p) => known.get(p)!;
      keyed = {
        values: fixed,
        // The values alone, space-separated.
        statKeys: route.limiters.map((l) =>
          this.limiters
            .get(l.name)!
            .parts.map((p) => fixed(p))
            .join(' '),
        ),
        keyStats: [],
        slots: [],
        planned: info.calendar ? undefined : planWindows(route.windows, fixed, ''),
      };
      this.#keyedCount++;
      level.set(last, keyed);
    }
    return keyed;
  }

  /** The hashed value of each part the route needs, derived from what the line has where it logs none. */
  #derived(route: CompiledRoute, rec: LogRecord): PartValues {
    const logged = rec.keys;
    const headers = rec.userAgent === undefined || logged ? {} : { 'user-agent': rec.userAgent };
    const derived = identityOf(
      this.#sources,
      route.parts,
      this.#peer(rec.client ?? ''),
      headers,
      MISSING_JWT,
      MISSING_TOKEN,
    ).hashed;
    return logged ? (p) => logged[p] ?? derived.get(p)! : (p) => derived.get(p)!;
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

/** The last target canonicalised, and its match path: a line both simulations replay is canonicalised once. */
let lastTarget = '/';
let lastMatchPath = canonicalTarget(lastTarget).matchPath;

function matchPathOf(target: string): string {
  if (target !== lastTarget) {
    lastMatchPath = canonicalTarget(target).matchPath;
    lastTarget = target;
  }
  return lastMatchPath;
}

/** The level under `level` for `value`, made when new. */
function sublevel(level: KeyLevel, value: string | undefined): KeyLevel {
  let next = level.get(value) as KeyLevel | undefined;
  if (next === undefined) level.set(value, (next = new Map()));
  return next;
}
