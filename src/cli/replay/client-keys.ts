/**
 * A replayed request's keys on its route, by the gateway's identity and key code (identityOf,
 * planWindows): made once per client and route, then found again by what they are made from (the
 * logged hashes, else the client's address and user agent), so nothing is built per request.
 * Reused, the same strings reach the Maps again and again (their hashes are kept).
 */
import type { WorkspaceTokenStore } from '../../credentials/workspace-token.js';
import { describePeer, type Peer } from '../../identity/peer.js';
import { identityOf, type IdentitySources } from '../../identity/resolve.js';
import { planWindows, type PartValues } from '../../limits/plan.js';
import { TrustedProxies } from '../../net/client-ip.js';
import type { CompiledRoute } from '../../rules/compile.js';
import type { KeyPart } from '../../rules/model.js';
import type { WindowRequest } from '../../store/window-store.js';
import type { LogRecord } from './log-formats.js';
import type { Slot } from './replay-store.js';
import type { StatKeys } from './stats.js';

/** Replayed logs carry no credential: a part the log lacks is keyed as the gateway keys a missing one. */
const MISSING_JWT = { ok: false, reason: 'missing' } as const;
const MISSING_TOKEN = { ok: false, reason: 'missing' } as const;
const NO_TOKENS: WorkspaceTokenStore = { verify: () => Promise.resolve(false) };
/** Bounds of the caches of peers and keyed requests (cleared when full: a log's hot keys come back at once). */
const CACHE_MAX = 100_000;

/** A client's keys on one route: its parts' values, its statistics' keys and its store requests. */
export interface Keyed extends StatKeys {
  readonly values: PartValues;
  /** planWindows(route.windows, …); undefined on a route with calendar windows (their keys move). */
  readonly planned: readonly WindowRequest[] | undefined;
  /** The store's slots of `planned`, index by index (filled by the store). */
  readonly slots: (Slot | undefined)[];
  /** The compact lane's rows (compact.ts): the first limiter's (-1 until found), all when more. */
  row0: number;
  rows: readonly number[] | undefined;
}

/** Keyed requests found by what their keys are made from: a level per value, the last holds them. */
type KeyLevel = Map<string | undefined, unknown>;
/**
 * What the last level holds: per route keyed by the same parts (its slot), the client's Keyed at
 * 2 × slot, or on the compact lane's routes of one limiter, its row at 2 × slot + 1 (kept there
 * by row0, the Keyed let go: a line reads the row with the node).
 */
type KeyNode = (Keyed | number | undefined)[];

/** The levels of the routes keyed by one list of parts, and the last lookup made in them. */
interface PartsLevels {
  readonly byLogged: KeyLevel;
  readonly byRaw: KeyLevel;
  /** Slots given out (one per route keyed by these parts). */
  slots: number;
  lastLevel: KeyLevel | undefined;
  lastKey: string | undefined;
  lastNode: KeyNode | undefined;
}

/**
 * The levels keyed requests are found in, shared by the routes keyed by the same parts, in one
 * simulation or in the candidate's and the baseline's: a line both replay is looked up once (the
 * second finds the first's node). What a level is keyed by (logged hashes, the raw address and
 * user agent) does not depend on the config; each route's Keyed has its own slot in the node.
 */
export class KeyLevels {
  readonly #byParts = new Map<string, PartsLevels>();
  /** Keyed requests cached, cleared when `perSimulation` for each simulation sharing the levels. */
  made = 0;
  bound = 0;

  /** `perSimulation`: the cache's bound per simulation (smaller in tests, to clear it often). */
  constructor(readonly perSimulation: number = CACHE_MAX) {}

  of(parts: readonly KeyPart[]): { levels: PartsLevels; slot: number } {
    const id = parts.join(' ');
    let levels = this.#byParts.get(id);
    if (!levels) {
      levels = {
        byLogged: new Map(),
        byRaw: new Map(),
        slots: 0,
        lastLevel: undefined,
        lastKey: undefined,
        lastNode: undefined,
      };
      this.#byParts.set(id, levels);
    }
    return { levels, slot: levels.slots++ };
  }

  clear(): void {
    for (const l of this.#byParts.values()) {
      l.byLogged.clear();
      l.byRaw.clear();
      l.lastLevel = undefined;
      l.lastNode = undefined;
    }
    this.made = 0;
  }
}

/** What the keys of a route are made of, and where its keyed requests are found. */
export interface RouteKeying {
  readonly route: CompiledRoute;
  /** route.parts as an array: walked every request, without an iterator. */
  readonly parts: readonly KeyPart[];
  /** Per limiter of the route: the parts its statistics' keys are made of. */
  readonly statParts: readonly (readonly KeyPart[])[];
  /** Some window is a calendar one: its keys depend on the time (not planned once). */
  readonly calendar: boolean;
  /**
   * A line without logged keys is keyed by its address alone when every part is `ip`: the user
   * agent is read for other parts only (a credential's fallback is the address too).
   */
  readonly byAddress: boolean;
  /** Keyed requests by the logged hashes (then, where one lacks, the address); by address (and user agent). */
  readonly levels: PartsLevels;
  /** This route's place in the levels' nodes. */
  readonly slot: number;
}

export class ClientKeys {
  /** Requests keyed by a part the log does not carry, by part (keyed as if the part were missing). */
  readonly missing = new Map<KeyPart, number>();
  readonly #sources: IdentitySources;
  readonly #peers = new Map<string, Peer>();
  readonly #levels: KeyLevels;

  /** `levels`: shared with the replay's other simulation (its lines looked up once for both). */
  constructor(ipv6PrefixLength: number, levels: KeyLevels = new KeyLevels()) {
    this.#levels = levels;
    levels.bound += levels.perSimulation;
    this.#sources = {
      // The logged address is the client's (a proxy in front logs its own real-IP result).
      trustedProxies: new TrustedProxies([]),
      ipv6PrefixLength,
      jwt: undefined,
      workspaceTokens: NO_TOKENS,
    };
  }

  /** A route's keying: the levels of the routes keyed by the same parts, its own slot in them. */
  add(route: CompiledRoute, statParts: readonly (readonly KeyPart[])[]): RouteKeying {
    const parts = [...route.parts];
    return {
      route,
      parts,
      statParts,
      calendar: route.windows.some((w) => !!w.window.calendar),
      byAddress: parts.every((p) => p === 'ip'),
      ...this.#levels.of(parts),
    };
  }

  /** The request's keys on the route (counting the parts the line lacks). */
  of(rec: LogRecord, k: RouteKeying): Keyed {
    return this.#keyed(this.#node(rec, k), rec, k);
  }

  /**
   * The compact lane's row of the request's client on a route of one limiter (what `of` gives as
   * row0), kept in the client's node; `find` finds the Keyed's rows the first time.
   */
  row0(rec: LogRecord, k: RouteKeying, find: (keyed: Keyed) => void): number {
    const node = this.#node(rec, k);
    const kept = node[2 * k.slot + 1] as number | undefined;
    if (kept !== undefined) return kept;
    const keyed = this.#keyed(node, rec, k);
    if (keyed.row0 < 0) find(keyed);
    node[2 * k.slot + 1] = keyed.row0;
    // Not read again (the row is kept): let it go, a smaller heap for the collector to mark.
    node[2 * k.slot] = undefined;
    return keyed.row0;
  }

  /** The client's Keyed on the route in its node, made the first time. */
  #keyed(node: KeyNode, rec: LogRecord, k: RouteKeying): Keyed {
    let keyed = node[2 * k.slot] as Keyed | undefined;
    if (!keyed) {
      const logged = rec.keys;
      const complete = logged !== undefined && k.parts.every((p) => logged[p] !== undefined);
      keyed = this.#made(rec, k, complete ? (p: KeyPart) => logged[p]! : this.#derived(k, rec));
      this.#levels.made++;
      node[2 * k.slot] = keyed;
    }
    return keyed;
  }

  /** The client's node in the route's levels (counting the parts the line lacks). */
  #node(rec: LogRecord, k: RouteKeying): KeyNode {
    const { parts } = k;
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
    if (this.#levels.made >= this.#levels.bound) this.#levels.clear();
    const { levels } = k;
    // Found by the logged hashes (then, where one lacks, the address: the rest is derived from it
    // alone), else by the address and user agent: a Map level per value, no string made per line.
    let level: KeyLevel;
    let last: string | undefined;
    if (logged) {
      level = levels.byLogged;
      const n = parts.length;
      for (let i = 0; i < n - 1; i++) level = sublevel(level, logged[parts[i]!]);
      if (lacking) {
        if (n > 0) level = sublevel(level, logged[parts[n - 1]!]);
        last = rec.client;
      } else last = n > 0 ? logged[parts[n - 1]!] : undefined;
    } else if (k.byAddress) {
      level = levels.byRaw;
      last = rec.client;
    } else {
      level = sublevel(levels.byRaw, rec.client);
      last = rec.userAgent;
    }
    // The other simulation's route keyed by the same parts has often just looked this up.
    let node: KeyNode | undefined;
    if (level === levels.lastLevel && last === levels.lastKey) node = levels.lastNode!;
    else {
      node = level.get(last) as KeyNode | undefined;
      if (node === undefined) level.set(last, (node = []));
      levels.lastLevel = level;
      levels.lastKey = last;
      levels.lastNode = node;
    }
    return node;
  }

  peer(client: string): Peer {
    let peer = this.#peers.get(client);
    if (!peer) {
      peer = describePeer(client, this.#sources);
      if (this.#peers.size >= CACHE_MAX) this.#peers.clear();
      this.#peers.set(client, peer);
    }
    return peer;
  }

  #made(rec: LogRecord, k: RouteKeying, values: PartValues): Keyed {
    const known = new Map<KeyPart, string>();
    for (const p of k.parts) known.set(p, values(p));
    const fixed: PartValues = (p) => known.get(p)!;
    return {
      // First: read every line, in the object's first cache line.
      row0: -1,
      values: fixed,
      // The values alone, space-separated.
      statKeys: k.statParts.map((parts) => parts.map((p) => fixed(p)).join(' ')),
      keyStats: [],
      slots: [],
      planned: k.calendar ? undefined : planWindows(k.route.windows, fixed, ''),
      rows: undefined,
    };
  }

  /** The hashed value of each part the route needs, derived from what the line has where it logs none. */
  #derived(k: RouteKeying, rec: LogRecord): PartValues {
    const logged = rec.keys;
    const headers = rec.userAgent === undefined || logged ? {} : { 'user-agent': rec.userAgent };
    const derived = identityOf(
      this.#sources,
      k.route.parts,
      this.peer(rec.client ?? ''),
      headers,
      MISSING_JWT,
      MISSING_TOKEN,
    ).hashed;
    return logged ? (p) => logged[p] ?? derived.get(p)! : (p) => derived.get(p)!;
  }
}

/** The level under `level` for `value`, made when new. */
function sublevel(level: KeyLevel, value: string | undefined): KeyLevel {
  let next = level.get(value) as KeyLevel | undefined;
  if (next === undefined) level.set(value, (next = new Map()));
  return next;
}
