/** Time as the client sees it: injectable, so tests can wait out an hour window at once. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason as soon as the signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** setTimeout's longest delay (about 24.8 days): longer waits are taken in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The reason an aborted signal carries (an AbortError DOMException when none was given). */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(abortReason(signal));
      let timer: ReturnType<typeof setTimeout> | undefined;
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortReason(signal!));
      };
      const end = Date.now() + ms;
      const step = () => {
        const left = end - Date.now();
        if (left <= 0) {
          signal?.removeEventListener('abort', onAbort);
          return resolve();
        }
        timer = setTimeout(step, Math.min(left, MAX_TIMER_MS));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      timer = setTimeout(step, Math.min(Math.max(0, ms), MAX_TIMER_MS));
    });
  },
};

/** The page's address in a browser (relative URLs resolve against it); undefined in Node. */
export function documentBase(): string | undefined {
  return (globalThis as { location?: { href?: string } }).location?.href;
}
