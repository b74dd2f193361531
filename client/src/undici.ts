// @tollgate/client/undici: the same consumer rules as an undici 7 interceptor, for Node code that
// uses undici directly. Only undici's types are imported: it stays an optional peer dependency,
// and the browser entry (index.ts) never loads this file.
import type { Dispatcher } from 'undici';
import { abortReason, systemClock } from './clock.js';
import { parseRateLimitHeaders, retryDelayMs, type RateLimitHeaders } from './headers.js';
import { defaultLimiterKey, type LimiterKeyFn } from './limiter-key.js';
import { SharedLimits } from './limiter-state.js';
import type { RateLimitOptions } from './rate-limited-fetch.js';

export type TollgateInterceptorOptions = Omit<RateLimitOptions, 'fetch'>;

type HeaderValue = string | string[] | number | undefined | null;

/** One header of undici's request headers, in any of the shapes undici accepts. */
function requestHeader(headers: Dispatcher.DispatchOptions['headers'], name: string): string | undefined {
  if (headers == null) return undefined;
  const pick = (value: HeaderValue) =>
    value == null ? undefined : Array.isArray(value) ? value.join(', ') : String(value);
  if (Array.isArray(headers)) {
    // A flat [name, value, name, value, …] list.
    for (let i = 0; i + 1 < headers.length; i += 2)
      if (String(headers[i]).toLowerCase() === name) return pick(headers[i + 1] as HeaderValue);
    return undefined;
  }
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    for (const [k, v] of headers as Iterable<[string, HeaderValue]>)
      if (k.toLowerCase() === name) return pick(v);
    return undefined;
  }
  for (const [k, v] of Object.entries(headers as Record<string, HeaderValue>))
    if (k.toLowerCase() === name) return pick(v);
  return undefined;
}

/** A response header of undici's (lower-case names; a list joined). */
const responseHeader = (headers: Record<string, string | string[] | undefined>) => (name: string) => {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
};

/** Bodies that can be sent again: a 429's retry re-sends them. Streams and iterables cannot. */
const replayable = (body: Dispatcher.DispatchOptions['body']): boolean =>
  body == null || typeof body === 'string' || body instanceof Uint8Array;

/** The request's abort signal: undici passes request()'s `signal` in the dispatch options. */
function signalOf(opts: Dispatcher.DispatchOptions): AbortSignal | undefined {
  const signal = (opts as { signal?: unknown }).signal;
  if (signal == null) return undefined;
  if (typeof (signal as AbortSignal).addEventListener === 'function') return signal as AbortSignal;
  // undici also accepts an EventEmitter that emits 'abort'.
  const emitter = signal as { once?: (event: string, fn: () => void) => void };
  if (typeof emitter.once !== 'function') return undefined;
  const controller = new AbortController();
  emitter.once('abort', () => controller.abort());
  return controller.signal;
}

/** A controller for a handler that never got one: the request was cancelled while waiting. */
function idleController(reason: Error): Dispatcher.DispatchController {
  return { aborted: true, paused: false, reason, abort() {}, pause() {}, resume() {} };
}

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/**
 * An undici interceptor that follows tollgate's consumer rules for every method: a 429 is waited
 * out (Retry-After, else X-RateLimit-Reset) and sent again; once Remaining reaches the threshold,
 * requests of the same limiter key (origin + credential by default) wait for the reset. The refused
 * 429 never reaches the caller unless retries are spent, the body cannot be sent again, or the
 * wait would pass the deadline. `request()`'s signal cancels the waits too.
 *
 *   const dispatcher = new Agent().compose(tollgateRateLimit({ maxRetries: 3 }));
 */
export function tollgateRateLimit(
  options: TollgateInterceptorOptions = {},
): Dispatcher.DispatcherComposeInterceptor {
  const clock = options.clock ?? options.limits?.clock ?? systemClock;
  const limits =
    options.limits ?? new SharedLimits({ clock, remainingThreshold: options.remainingThreshold ?? 0 });
  const keyOf: LimiterKeyFn = options.limiterKey ?? defaultLimiterKey;
  const maxRetries = options.maxRetries ?? 5;

  return (dispatch) => (opts, handler) => {
    const url = new URL(opts.path, opts.origin);
    const method = opts.method.toUpperCase();
    const key = keyOf({ url, method, header: (name) => requestHeader(opts.headers, name) });
    const signal = signalOf(opts);
    const deadlineAt = options.deadlineMs === undefined ? Infinity : clock.now() + options.deadlineMs;
    const canRetry = replayable(opts.body);
    const onWait = options.onWait;

    /** One attempt; resolves true when its 429 was held back for a retry. */
    const attempt = (n: number) =>
      new Promise<boolean>((resolve) => {
        let settled = false;
        let heldBack = false;
        const settle = (status?: number, headers?: RateLimitHeaders) => {
          if (settled) return;
          settled = true;
          limits.settle(key, status, headers);
        };
        const forward: Dispatcher.DispatchHandler = {
          onRequestStart: (controller, context: unknown) => handler.onRequestStart?.(controller, context),
          onRequestUpgrade: (controller, status, headers, socket) => {
            settle(status);
            handler.onRequestUpgrade?.(controller, status, headers, socket);
          },
          onResponseStart: (controller, status, headers, message) => {
            if (status >= 200) {
              const now = clock.now();
              const rate = parseRateLimitHeaders(responseHeader(headers), now);
              settle(status, rate);
              if (status === 429) {
                const delayMs = retryDelayMs(rate, now);
                heldBack =
                  delayMs !== undefined && n <= maxRetries && canRetry && now + delayMs <= deadlineAt;
                options.onRateLimited?.({
                  key,
                  method,
                  url: url.href,
                  attempt: n,
                  headers: rate,
                  delayMs,
                  willRetry: heldBack,
                });
                if (heldBack) return;
              }
            }
            handler.onResponseStart?.(controller, status, headers, message);
          },
          onResponseData: (controller, chunk) => {
            if (!heldBack) handler.onResponseData?.(controller, chunk);
          },
          onResponseEnd: (controller, trailers) => {
            if (heldBack) return resolve(true);
            handler.onResponseEnd?.(controller, trailers);
            resolve(false);
          },
          onResponseError: (controller, err) => {
            settle();
            handler.onResponseError?.(controller, err);
            resolve(false);
          },
        };
        try {
          dispatch(opts, forward);
        } catch (err) {
          settle();
          handler.onResponseError?.(idleController(asError(err)), asError(err));
          resolve(false);
        }
      });

    void (async () => {
      for (let n = 1; ; n++) {
        try {
          await limits.acquire(key, {
            signal,
            deadlineMs: deadlineAt,
            onWait: onWait && ((event) => onWait({ ...event, method, url: url.href })),
          });
        } catch (err) {
          const error = asError(signal?.aborted ? abortReason(signal) : err);
          handler.onResponseError?.(idleController(error), error);
          return;
        }
        if (!(await attempt(n))) return;
      }
    })();
    return true;
  };
}
