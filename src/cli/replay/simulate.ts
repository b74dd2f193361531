/**
 * One config's what-if over a log: every request routed by the compiled rules, keyed by the
 * gateway's identity and key code (client-keys.ts), screened, tiered and priced by the gateway's
 * policy functions, counted in replay's store (the memory store's maths) on the log's clock and
 * decided as the gateway decides (countRequest's steps, in its order; decide's verdict read by
 * verdict.ts, without the headers' report). Nothing leaves the process.
 */
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
import { planWindows } from '../../limits/plan.js';
import type { CompiledLimiter, CompiledRoute, RuleTable } from '../../rules/compile.js';
import type { KeyPart } from '../../rules/model.js';
import type { WindowRequest, WindowResult } from '../../store/window-store.js';
import { ClientKeys, type KeyLevels } from './client-keys.js';
import { compactFits, compactRoute, CompactWindows, type ClientRows, type RowData } from './compact.js';
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
import { matchPathOf, sameRouting } from './routing.js';
import type { RouteInfo } from './route-info.js';
import { ReplayStore, type ReplayWindows, type Slot } from './replay-store.js';
import { countRequest, limiterStats, routeStats, type LimiterStats, type RouteStats } from './stats.js';
import { verdict } from './verdict.js';

export type { KeyStats, LimiterStats, RouteStats } from './stats.js';

/** Store keys held at most; expired windows are swept first (the store's own bound). */
const STORE_MAX_KEYS = 5_000_000;
/**
 * Window keys the compact lane holds at most: it sweeps nothing, so a log of millions of one-off
 * clients would hold rows and maps for every key ever seen (about 200 bytes each); past this, the
 * logs are read again on the generic path, which sweeps expired windows.
 */
const COMPACT_MAX_KEYS = 1_000_000;
const SWEEP_EVERY = 65_536;

export interface SimulationOptions {
  /** The compact lane where the config fits it (default true). */
  readonly compact?: boolean;
  /** The compact lane's numbers, shared with the replay's other simulation (a client's rows side by side). */
  readonly rows?: RowData;
  /** Where clients' keys are found, shared with the replay's other simulation (a line looked up once for both). */
  readonly levels?: KeyLevels;
}

export class Simulation {
  readonly routes = new Map<string, RouteStats>();
  readonly limiters = new Map<string, LimiterStats>();
  /** Requests no route matches (the gateway answers 404). */
  unrouted = 0;
  /** Requests keyed by a part the log does not carry, by part (keyed as if the part were missing). */
  readonly missing: Map<KeyPart, number>;
  /** Policy fields lines lacked, by limiter and field. */
  readonly warnings = new Warnings();

  readonly #table: RuleTable;
  readonly #keys: ClientKeys;
  readonly #tiers: TierSources;
  readonly #store: ReplayWindows;
  readonly #compact: CompactWindows | undefined;
  #now = 0;
  #fed = 0;
  readonly #routeInfo = new Map<CompiledRoute, RouteInfo>();
  /** The routes' RouteInfo by index. */
  readonly #infos: RouteInfo[] = [];
  /** A route of one limiter's client rows, as compact feed reads them (filled a request at a time). */
  readonly #one: ClientRows = { row0: -1, rows: undefined };

  /**
   * `windows`: the store to count in (tests compare the replay's store with the gateway's);
   * `compact`: the compact lane (compact.ts) where the config fits it and no store is given (it
   * throws CompactUnfit when it cannot stand for the store: then replay again without).
   */
  constructor(
    table: RuleTable,
    overrides: OverrideTable = OverrideTable.EMPTY,
    windows?: (now: () => number) => ReplayWindows,
    options: SimulationOptions = {},
  ) {
    const compact = options.compact ?? true;
    this.#table = table;
    const config = table.config;
    this.#keys = new ClientKeys(config.identity.ipv6PrefixLength, options.levels);
    this.missing = this.#keys.missing;
    this.#tiers = {
      jwt: config.tiers.jwt !== undefined,
      workspaceTokenPlan: config.tiers.workspaceTokenPlan,
      overrides,
    };
    this.#store = (windows ?? ((now) => new ReplayStore({ maxKeys: STORE_MAX_KEYS, now })))(() => this.#now);
    this.#compact =
      compact && !windows && compactFits(table, overrides.empty)
        ? new CompactWindows(COMPACT_MAX_KEYS, options.rows)
        : undefined;
    for (const [index, route] of table.routes.entries()) {
      const stats = route.limiters.map((limiter) => {
        let s = this.limiters.get(limiter.name);
        if (!s) this.limiters.set(limiter.name, (s = limiterStats(limiter)));
        return s;
      });
      const compact = this.#compact && compactRoute(route);
      const info: RouteInfo = {
        index,
        routeStats: routeStats(route),
        stats,
        keying: this.#keys.add(
          route,
          stats.map((s) => s.parts),
        ),
        lists: hasLists(route.limiters),
        bans: route.limiters.some((l) => l.ban !== undefined),
        unkeyed: route.windows.some((w) => w.window.calendar || w.limiter.ban !== undefined)
          ? undefined
          : planWindows(route.windows, () => '', ''),
        compact,
        find: (keyed) => this.#compact!.find(compact!, keyed, stats),
        oneLimiter: route.limiters.length === 1,
      };
      this.routes.set(route.name, info.routeStats);
      this.#routeInfo.set(route, info);
      this.#infos.push(info);
    }
  }

  /** Whether this simulation takes the compact lane (compact.ts). */
  get compact(): boolean {
    return this.#compact !== undefined;
  }

  /** The request's route, as an index into the config's routes (-1: none matches). */
  routeIndex(rec: LogRecord): number {
    // Without the router's memo: a log's paths seldom repeat while it holds them.
    const route = this.#table.router.scanPath(rec.host, rec.method, matchPathOf(rec.target));
    return route ? this.#routeInfo.get(route)!.index : -1;
  }

  /**
   * Whether `other` routes every request as this does: the same routes' hosts, methods and
   * paths in the same order (what the router reads), so one routeIndex serves both.
   */
  routesAs(other: Simulation): boolean {
    return sameRouting(this.#table.routes, other.#table.routes);
  }

  /** Replays one request at `nowMs` (the caller keeps the clock from going back); `index`: its routeIndex. */
  feed(rec: LogRecord, nowMs: number, index: number = this.routeIndex(rec)): void {
    this.#now = nowMs;
    if (++this.#fed % SWEEP_EVERY === 0) this.#store.sweep(nowMs);
    const info = index < 0 ? undefined : this.#infos[index];
    if (!info) {
      this.unrouted++;
      return;
    }
    const route = info.keying.route;
    const routeStats = info.routeStats;
    routeStats.requests++;
    if (route.windows.length === 0) return;
    if (info.compact) {
      // One limiter (most routes): the row read with the client's node, not from its Keyed.
      let client: ClientRows;
      if (info.oneLimiter) {
        client = this.#one;
        client.row0 = this.#keys.row0(rec, info.keying, info.find);
      } else {
        const keyed = this.#keys.of(rec, info.keying);
        if (keyed.row0 < 0) info.find(keyed);
        client = keyed;
      }
      this.#compact!.feed(info.compact, client, routeStats, info.stats, nowMs);
      return;
    }
    const keyed = this.#keys.of(rec, info.keying);
    // Tiers and overrides: the windows at the request's tier (none for `unlimited`).
    let windows = route.windows;
    if (tierApplies(this.#tiers, route)) {
      const tier = tierOfRecord(this.#tiers, route, rec, this.#keys.peer(rec.client ?? ''), this.warnings);
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
      const peer = this.#keys.peer(rec.client ?? '');
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
    let results = costs
      ? this.#decide(admissionRequests(windows, planned, costs), slots, undefined)
      : this.#decide(planned, slots, slots && info.unkeyed);
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
    countRequest(route, info.stats, keyed, windows, results, exempt);
    if (decision !== 'refused' && route.deferred && costs) {
      const headers = chargedHeaders(windows, rec, this.warnings);
      const { charges } = postCharges(windows, costs, rec.status ?? 0, headers);
      const charged = chargeRequests(planned, charges);
      if (charged.length > 0) this.#store.hitNow(charged);
    }
  }

  async close(): Promise<void> {
    this.settle();
    await this.#store.close();
  }

  /** The statistics brought up to date (the compact lane keeps its keys' in its rows). */
  settle(): void {
    this.#compact?.settle();
  }

  /**
   * The store's decision: without retry times, in results it reuses (the replay store's
   * decideNow); read from `unkeyed` (the same requests without their keys) when given.
   */
  #decide(
    requests: readonly WindowRequest[],
    slots: (Slot | undefined)[] | undefined,
    unkeyed: readonly WindowRequest[] | undefined,
  ): readonly WindowResult[] {
    const store = this.#store;
    if (!store.decideNow) return store.hitNow(requests, slots);
    return unkeyed ? store.decideNow(unkeyed, slots, requests) : store.decideNow(requests, slots);
  }
}
