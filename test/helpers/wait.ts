/** Calls `attempt` until `done` accepts its result, or throws after `timeoutMs`. */
export async function waitFor<T>(
  attempt: () => Promise<T> | T,
  done: (value: T) => boolean,
  { timeoutMs = 10_000, intervalMs = 50, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await attempt();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `fn` and reports how long it took, in milliseconds. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}

/**
 * Resolves once the wall clock is past `epochMs`: for waits on the clock itself, such as a window's
 * announced reset, or a timestamp that must come out later than one already stored.
 */
export async function untilClockPast(epochMs: number): Promise<void> {
  while (Date.now() <= epochMs) await sleep(epochMs - Date.now() + 1);
}
