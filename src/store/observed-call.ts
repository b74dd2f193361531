import { performance } from 'node:perf_hooks';
import type { StoreObserver } from './window-store.js';

/**
 * One round trip of the leasing store (a lease, a give-back) for the store metrics, as the batching
 * store's: its time once answered, an error when it fails, or when it is still unanswered at
 * `timeoutMs` (then once only). No observer: the call as it is.
 */
export function observedCall<T>(
  observer: StoreObserver | undefined,
  timeoutMs: number,
  call: Promise<T>,
): Promise<T> {
  if (!observer) return call;
  const started = performance.now();
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    observer.storeError();
  }, timeoutMs);
  const done = () => {
    clearTimeout(timer);
    observer.storeRoundTrip((performance.now() - started) / 1000);
  };
  return call.then(
    (value) => {
      done();
      observer.storeAnswered?.();
      return value;
    },
    (err: unknown) => {
      done();
      if (!late) observer.storeError();
      throw err;
    },
  );
}
