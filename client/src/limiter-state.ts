import { abortReason, type Clock } from './clock.js';
import type { RateLimitHeaders } from './headers.js';

/**
 * What the client knows of one limiter key (by default: one base URL and credential), learnt from
 * the headers of its responses. Windows are fixed and deterministic, so the last response tells
 * how much budget is left and when it comes back.
 */
export interface LimitState {
  /** X-RateLimit-Remaining of the current window; undefined while unknown. */
  remaining: number | undefined;
  /** When the current window resets (ms); the knowledge expires with it. */
  resetAtMs: number;
  /** No request is sent before this (ms): set by a 429's Retry-After. */
  pausedUntilMs: number;
  /** Requests sent and not yet answered. */
  inFlight: number;
  /** False once a response came without rate-limit headers: the surface is not limited. */
  metered: boolean;
}

export type WaitReason = 'retry-after' | 'remaining';

export type Verdict =
  | { readonly kind: 'send' }
  | { readonly kind: 'sleep'; readonly untilMs: number; readonly reason: WaitReason }
  /** Requests in flight will tell the budget (or spend it): wait for their answers. */
  | { readonly kind: 'await-answer' };

export const freshState = (): LimitState => ({
  remaining: undefined,
  resetAtMs: 0,
  pausedUntilMs: 0,
  inFlight: 0,
  metered: true,
});

/**
 * Whether a request may be sent now. While the budget is unknown (first request, or a window that
 * has reset) one request goes alone and its answer tells the rest; while known, requests go while
 * more than `threshold` remain after those in flight; at the threshold, the key pauses until the
 * window resets. Only a key with nothing in flight waits on the clock, so a wait always starts from
 * the latest answer.
 */
export function verdict(s: LimitState, nowMs: number, threshold: number): Verdict {
  if (s.pausedUntilMs > nowMs) return { kind: 'sleep', untilMs: s.pausedUntilMs, reason: 'retry-after' };
  if (!s.metered) return { kind: 'send' };
  if (s.remaining === undefined || s.resetAtMs <= nowMs) {
    return s.inFlight === 0 ? { kind: 'send' } : { kind: 'await-answer' };
  }
  if (s.remaining - s.inFlight > threshold) return { kind: 'send' };
  if (s.inFlight > 0) return { kind: 'await-answer' };
  return { kind: 'sleep', untilMs: s.resetAtMs, reason: 'remaining' };
}

/**
 * Folds one answer into the state (the request's slot is released by the caller). Answers of one
 * window may arrive out of order: within a window the lowest Remaining wins. An answer whose reset
 * is clearly before the known window's (more than the 1 s the header's rounding allows) belongs to
 * an earlier window and tells nothing.
 */
export function learn(s: LimitState, status: number, h: RateLimitHeaders | undefined, nowMs: number): void {
  if (!h) return;
  if (h.remaining === undefined) {
    if (status !== 429) s.metered = false;
  } else {
    s.metered = true;
    const resetAtMs = h.resetAtMs ?? nowMs;
    const known = s.remaining !== undefined && s.resetAtMs > nowMs;
    if (!known) {
      s.remaining = h.remaining;
      s.resetAtMs = resetAtMs;
    } else if (resetAtMs >= s.resetAtMs - 1000) {
      s.remaining = Math.min(s.remaining!, h.remaining);
      s.resetAtMs = Math.max(s.resetAtMs, resetAtMs);
    }
  }
  if (status === 429) {
    const delay = h.retryAfterMs ?? (h.resetAtMs === undefined ? undefined : h.resetAtMs - nowMs);
    if (delay !== undefined) s.pausedUntilMs = Math.max(s.pausedUntilMs, nowMs + delay);
  }
}

export interface WaitEvent {
  /** The limiter key, as keyed by the client (credentials hashed). */
  readonly key: string;
  readonly reason: WaitReason;
  /** How long the wait lasts, from now (ms). */
  readonly ms: number;
  /** When it ends (ms since the epoch, on the client's clock). */
  readonly untilMs: number;
}

export interface AcquireOptions {
  readonly signal?: AbortSignal | undefined;
  /** No wait may end after this (ms since the epoch); a longer one throws RateLimitDeadlineError. */
  readonly deadlineMs?: number | undefined;
  readonly onWait?: ((event: WaitEvent) => void) | undefined;
}

/** A wait would end past the caller's deadline: the request was not sent (again). */
export class RateLimitDeadlineError extends Error {
  constructor(
    readonly key: string,
    readonly untilMs: number,
    readonly deadlineMs: number,
  ) {
    super(`the rate limit allows a request at ${new Date(untilMs).toISOString()}, after the deadline`);
    this.name = 'RateLimitDeadlineError';
  }
}

interface Entry extends LimitState {
  /** Woken by every answer (and released slot) of this key. */
  readonly waiters: Set<() => void>;
}

/** Past this many keys, idle keys whose knowledge has expired are dropped. */
const SWEEP_AT = 1000;

/**
 * The pause state every caller of one limiter key shares: one instance per client by default, or
 * one passed to several clients (and the undici interceptor) so they pause together.
 */
export class SharedLimits {
  readonly #entries = new Map<string, Entry>();
  readonly threshold: number;
  readonly clock: Clock;

  constructor(options: { readonly clock: Clock; readonly remainingThreshold?: number }) {
    this.clock = options.clock;
    this.threshold = options.remainingThreshold ?? 0;
  }

  /** A copy of what is known of a key (for tests and diagnostics). */
  state(key: string): LimitState | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    const { waiters: _waiters, ...state } = e;
    return state;
  }

  #entry(key: string): Entry {
    let e = this.#entries.get(key);
    if (!e) {
      if (this.#entries.size >= SWEEP_AT) this.#sweep();
      e = { ...freshState(), waiters: new Set() };
      this.#entries.set(key, e);
    }
    return e;
  }

  #sweep(): void {
    const now = this.clock.now();
    for (const [key, e] of this.#entries) {
      if (e.inFlight === 0 && e.waiters.size === 0 && e.resetAtMs <= now && e.pausedUntilMs <= now)
        this.#entries.delete(key);
    }
  }

  /** Waits until a request of `key` may be sent, then counts it in flight: pair with `settle`. */
  async acquire(key: string, options: AcquireOptions = {}): Promise<void> {
    const { signal, deadlineMs = Infinity, onWait } = options;
    for (;;) {
      if (signal?.aborted) throw abortReason(signal);
      const e = this.#entry(key);
      const now = this.clock.now();
      const v = verdict(e, now, this.threshold);
      if (v.kind === 'send') {
        e.inFlight++;
        return;
      }
      if (v.kind === 'await-answer') {
        await this.#nextAnswer(e, signal);
        continue;
      }
      if (v.untilMs > deadlineMs) throw new RateLimitDeadlineError(key, v.untilMs, deadlineMs);
      onWait?.({ key, reason: v.reason, ms: v.untilMs - now, untilMs: v.untilMs });
      await this.clock.sleep(v.untilMs - now, signal);
    }
  }

  /** Releases a slot taken by `acquire`, with what the answer said (undefined: no answer). */
  settle(key: string, status?: number, headers?: RateLimitHeaders): void {
    const e = this.#entry(key);
    e.inFlight = Math.max(0, e.inFlight - 1);
    if (status !== undefined) learn(e, status, headers, this.clock.now());
    const waiters = [...e.waiters];
    e.waiters.clear();
    for (const wake of waiters) wake();
  }

  #nextAnswer(e: Entry, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        e.waiters.delete(wake);
        reject(abortReason(signal!));
      };
      const wake = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      e.waiters.add(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
