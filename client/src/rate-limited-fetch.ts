import { documentBase, systemClock, type Clock } from './clock.js';
import { parseRateLimitHeaders, retryDelayMs, type RateLimitHeaders } from './headers.js';
import { defaultLimiterKey, type LimiterKeyFn } from './limiter-key.js';
import { SharedLimits, type WaitEvent } from './limiter-state.js';

export type FetchFn = (input: URL, init: RequestInit) => Promise<Response>;

export interface RateLimitedEvent {
  readonly key: string;
  readonly method: string;
  readonly url: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly headers: RateLimitHeaders;
  /** How long the client waits before the retry (ms); undefined when the 429 says neither. */
  readonly delayMs: number | undefined;
  /** False when the response is handed back: retries spent, a wait past the deadline, no delay given, or a body that cannot be sent twice. */
  readonly willRetry: boolean;
}

export interface RateLimitOptions {
  /** The fetch to call (default: globalThis.fetch). */
  readonly fetch?: FetchFn;
  /** Retries after a 429, per call (default 5). The window is deterministic: each retry waits it out. */
  readonly maxRetries?: number;
  /** Pause a key's later calls until X-RateLimit-Reset once Remaining is at most this (default 0). */
  readonly remainingThreshold?: number;
  /** Which calls share one pause state (default: origin + credential; see defaultLimiterKey). */
  readonly limiterKey?: LimiterKeyFn;
  /** The time source and sleeper (default: the system clock and setTimeout). */
  readonly clock?: Clock;
  /** A pause state shared with other clients; by default each client has its own. */
  readonly limits?: SharedLimits;
  /** An overall bound on each call's waits, in ms from its start (default: none). */
  readonly deadlineMs?: number;
  /** Called for every 429 received. */
  readonly onRateLimited?: (event: RateLimitedEvent) => void;
  /** Called before every wait on the clock (a 429's Retry-After, or a spent budget). */
  readonly onWait?: (event: WaitEvent & { readonly method: string; readonly url: string }) => void;
}

export interface CallInit extends RequestInit {
  /** This call's overall bound on waits, in ms (overrides the client's). */
  readonly deadlineMs?: number;
}

const isStream = (body: RequestInit['body']): boolean =>
  typeof ReadableStream !== 'undefined' && body instanceof ReadableStream;

/**
 * fetch that follows the consumer rules of the tollgate interface: on 429 it waits Retry-After (or
 * until X-RateLimit-Reset) and retries, for every method, since a refused request was not processed;
 * when Remaining falls to the threshold, calls of the same limiter key pause until the reset. No
 * exponential back-off: the window is deterministic. An AbortSignal cancels the waits too.
 */
export class RateLimitedFetch {
  readonly limits: SharedLimits;
  readonly #fetch: FetchFn;
  readonly #clock: Clock;
  readonly #maxRetries: number;
  readonly #key: LimiterKeyFn;
  readonly #options: RateLimitOptions;

  constructor(options: RateLimitOptions = {}) {
    this.#options = options;
    this.#clock = options.clock ?? options.limits?.clock ?? systemClock;
    this.limits =
      options.limits ??
      new SharedLimits({ clock: this.#clock, remainingThreshold: options.remainingThreshold ?? 0 });
    // Looked up at call time: a fetch installed (or mocked) after the client was made is used.
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#maxRetries = options.maxRetries ?? 5;
    this.#key = options.limiterKey ?? defaultLimiterKey;
  }

  /**
   * Like fetch (a URL, relative to the page in a browser, and a RequestInit; not a Request, whose
   * body could not be sent twice).
   */
  async fetch(input: string | URL, init: CallInit = {}): Promise<Response> {
    const url = new URL(input, documentBase());
    const { deadlineMs: callDeadline, ...requestInit } = init;
    const method = (requestInit.method ?? 'GET').toUpperCase();
    const headers = new Headers(requestInit.headers);
    const key = this.#key({ url, method, header: (name) => headers.get(name) ?? undefined });
    const deadlineMs = callDeadline ?? this.#options.deadlineMs;
    const deadlineAt = deadlineMs === undefined ? Infinity : this.#clock.now() + deadlineMs;
    const signal = requestInit.signal ?? undefined;
    const replayable = !isStream(requestInit.body);
    const onWait = this.#options.onWait;

    for (let attempt = 1; ; attempt++) {
      await this.limits.acquire(key, {
        signal,
        deadlineMs: deadlineAt,
        onWait: onWait && ((event) => onWait({ ...event, method, url: url.href })),
      });
      let response: Response;
      try {
        response = await this.#fetch(url, { ...requestInit, method, headers });
      } catch (err) {
        this.limits.settle(key);
        throw err;
      }
      const now = this.#clock.now();
      const rate = parseRateLimitHeaders((name) => response.headers.get(name), now);
      this.limits.settle(key, response.status, rate);
      if (response.status !== 429) return response;

      const delayMs = retryDelayMs(rate, now);
      const willRetry =
        delayMs !== undefined && attempt <= this.#maxRetries && replayable && now + delayMs <= deadlineAt;
      this.#options.onRateLimited?.({
        key,
        method,
        url: url.href,
        attempt,
        headers: rate,
        delayMs,
        willRetry,
      });
      if (!willRetry) return response;
      // The refused answer's body is not needed: free the connection.
      await response.body?.cancel().catch(() => undefined);
    }
  }
}
