/**
 * `work`'s outcome, or a rejection with `timedOut()` once `ms` pass first. The timer is cleared as
 * soon as `work` settles, and a rejection of `work` after the timeout is handled, never left
 * unhandled. A timeout does not stop `work` (a lease sent still counts if it lands).
 */
export function withTimeout<T>(work: Promise<T>, ms: number, timedOut: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(timedOut()), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err as Error);
      },
    );
  });
}

/** Once every one of `calls` settled, or `ms` passed: what waits goes on either way. */
export const settledWithin = (calls: readonly Promise<unknown>[], ms: number): Promise<unknown> =>
  withTimeout(Promise.allSettled(calls), ms, () => new Error('unsettled')).catch(() => undefined);
