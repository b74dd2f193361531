import type { LeaseRule } from '../rules/model.js';

/**
 * How a window counts (config `algorithm`); absent on a request: fixed, `limit` hits per `periodMs`
 * from the key's first hit. See src/limits/window-maths/ for the other two.
 */
export type Algorithm = 'fixed' | 'sliding' | 'token-bucket';

/** One window to check and count. */
export interface WindowRequest {
  readonly key: string;
  /** Hits per period; for a token bucket, its burst (what the bucket holds). */
  readonly limit: number;
  readonly periodMs: number;
  /** False for shadow limiters: a spent window of theirs never blocks the request. */
  readonly enforce: boolean;
  /** Once spent, the window may be remembered in process and refused without a round trip. */
  readonly cacheWhenSpent: boolean;
  /** Hits this request adds (Envoy's hits_addend); absent: 1. The window has room when count + cost ≤ limit. */
  readonly cost?: number;
  /** Absent: fixed (the cheap path: nothing else is read). */
  readonly algorithm?: 'sliding' | 'token-bucket';
  /** A token bucket's refill: tokens per period (config `limit`). */
  readonly rate?: number;
  /**
   * A calendar window (fixed): its boundary in this process's clock; periodMs is then the time left
   * to it (the Redis key's TTL). The memory store keeps such windows by boundary.
   */
  readonly endsAtMs?: number;
  /** The limiter's penalty box, on the first of its windows (see BanRequest). */
  readonly ban?: BanRequest;
  /** [lease] A fixed window whose budget is leased in slices (src/store/leasing-store.ts). */
  readonly lease?: LeaseRule;
}

/**
 * A limiter's penalty box for one key (config `ban`), checked and counted in the same call as the
 * windows: while `key` exists the request is refused and nothing counted; a refusal by one of the
 * `span` windows from the one carrying it is a strike, counted in `strikesKey` for `withinMs` from
 * the first; the `after`-th bans the key for `forMs`. Both keys share the windows' hash tag.
 */
export interface BanRequest {
  readonly key: string;
  readonly strikesKey: string;
  readonly after: number;
  readonly withinMs: number;
  readonly forMs: number;
  readonly span: number;
}

/** A ban in the store, as the admin API lists it. */
export interface BanEntry {
  /** The ban's store key. */
  readonly key: string;
  readonly untilMs: number;
}

export interface WindowResult {
  /** Hits in the window, including this request when it was counted. */
  readonly count: number;
  readonly limit: number;
  /** When the window's budget is restored, in this process's clock. */
  readonly resetAtMs: number;
  /** Whether the window had room for this request (all of its cost). */
  readonly allowed: boolean;
  /**
   * Sliding and token bucket: the first moment a request of this cost would pass if nothing else
   * were counted (Retry-After, and how long the over-limit cache may refuse). Absent: resetAtMs.
   */
  readonly retryAtMs?: number;
  /** On a window carrying a ban: the key was banned (the request refused, nothing counted) until then. */
  readonly bannedUntilMs?: number;
  /** On a window carrying a ban: this request's refusal was the strike that banned the key. */
  readonly banStarted?: boolean;
}

/**
 * Checks every window; if all enforced windows have room, counts the request in all of them,
 * atomically. One network round trip at most, usually shared: the hits of one event-loop turn go
 * to Redis together (BatchingStore). Never waits longer than the configured timeout.
 */
export interface WindowStore {
  hit(windows: readonly WindowRequest[]): Promise<WindowResult[]>;
  /** Waits (bounded) until the store can answer; resolves false if it cannot yet. Never throws. */
  connect(): Promise<boolean>;
  /** Whether the store can answer now, and why not (for /readyz). Never throws. */
  readiness(): Promise<Readiness>;
  close(): Promise<void>;
  /** Bans in force whose keys start with `prefix`, at most `max` (admin API); absent: the store keeps none. */
  listBans?(prefix: string, max: number): Promise<{ bans: BanEntry[]; truncated: boolean }>;
  /** Lifts a ban (and forgets its strikes); false when there was none. */
  liftBan?(key: string, strikesKey: string): Promise<boolean>;
}

/**
 * One window's result from a Redis script's reply: its count after the call (this request's cost
 * included unless the request was blocked) and the milliseconds until it resets.
 */
export function scriptWindowResult(
  w: WindowRequest,
  count: number,
  ttlMs: number,
  blocked: boolean,
  nowMs: number,
): WindowResult {
  const cost = w.cost ?? 1;
  const before = blocked ? count : count - cost;
  // A calendar window resets at its boundary, not a round trip after it.
  const resetAtMs = w.endsAtMs ?? nowMs + ttlMs;
  return { count, limit: w.limit, resetAtMs, allowed: before + cost <= w.limit };
}

/** A sliding or token-bucket window's result from the script: also the ms until a retry passes. */
export function scriptAlgorithmResult(
  w: WindowRequest,
  count: number,
  resetInMs: number,
  retryInMs: number,
  blocked: boolean,
  nowMs: number,
): WindowResult {
  const cost = w.cost ?? 1;
  const before = blocked ? count : count - cost;
  return {
    count,
    limit: w.limit,
    resetAtMs: nowMs + resetInMs,
    allowed: before + cost <= w.limit,
    retryAtMs: nowMs + retryInMs,
  };
}

/** What a store reports of each request it answers (GatewayMetrics' store metrics). */
export interface StoreObserver {
  /** Seconds from the request's hit() to its answer (or its failure). */
  storeRoundTrip(seconds: number): void;
  storeError(): void;
  /** The store answered a request (not the over-limit cache): it is reachable. */
  storeAnswered?(): void;
}

/** Whether a store can count requests now; when it cannot, the reason (a Redis error, say). */
export type Readiness = { readonly ready: true } | { readonly ready: false; readonly reason: string };

export const READY: Readiness = { ready: true };

export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * A store that shows each answer to one listener before its caller sees it: the over-limit cache
 * remembers spent windows this way, without a then() (a promise and a closure) per request.
 */
export interface ResultTap {
  tapResults(tap: (requests: readonly WindowRequest[], results: WindowResult[]) => void): void;
}

/** What a wrapping store hands on: everything but deciding hits. */
export type StoreLifecycle = Pick<WindowStore, 'connect' | 'readiness' | 'close' | 'listBans' | 'liftBan'>;

/**
 * A store that wraps another (a cache, a batcher, instrumentation): it decides `hit` itself and
 * hands connecting, readiness and closing to the store it wraps.
 */
export abstract class WrappingStore<Inner extends StoreLifecycle = WindowStore> implements WindowStore {
  constructor(protected readonly inner: Inner) {}

  abstract hit(windows: readonly WindowRequest[]): Promise<WindowResult[]>;

  connect(): Promise<boolean> {
    return this.inner.connect();
  }

  readiness(): Promise<Readiness> {
    return this.inner.readiness();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  listBans(prefix: string, max: number): Promise<{ bans: BanEntry[]; truncated: boolean }> {
    return this.inner.listBans?.(prefix, max) ?? Promise.resolve({ bans: [], truncated: false });
  }

  liftBan(key: string, strikesKey: string): Promise<boolean> {
    return this.inner.liftBan?.(key, strikesKey) ?? Promise.resolve(false);
  }
}
