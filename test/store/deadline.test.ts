// The batching store's deadline measures Redis, not the gateway's event loop: a reply that arrived
// while the loop was busy counts, however late the deadline timer fires; a Redis that does not
// answer (SIGSTOP) still fails the batch at the deadline.
import { execFileSync } from 'node:child_process';
import { expect } from 'vitest';
import { BatchingStore } from '../../src/store/batching-store.js';
import { RedisStore } from '../../src/store/redis-store.js';
import {
  StoreUnavailableError,
  type StoreObserver,
  type WindowRequest,
} from '../../src/store/window-store.js';
import { test as serversTest } from '../helpers/fixtures.js';

const TIMEOUT_MS = 100;

const test = serversTest.extend('batching', { scope: 'file' }, async ({ redis }, { onCleanup }) => {
  const store = new RedisStore({ url: redis.url, probeKey: 'tg:readiness-probe', connectTimeoutMs: 2000 });
  const observer = { errors: 0, storeRoundTrip: () => undefined, storeError: () => observer.errors++ };
  const batching = new BatchingStore(store, { timeoutMs: TIMEOUT_MS, observer });
  onCleanup(() => batching.close());
  expect(await batching.connect()).toBe(true);
  await batching.hit([window('warm')]); // the library is loaded: later calls are one FCALL each
  return { batching, observer: observer as StoreObserver & { errors: number } };
});

function window(key: string): WindowRequest {
  return { key, limit: 10, periodMs: 60_000, enforce: true, cacheWhenSpent: false };
}

/** Holds the event loop synchronously for `ms`, and until `until` (if given) holds. */
function blockLoop(ms: number, until: () => boolean = () => true): void {
  const end = performance.now() + ms;
  while (performance.now() < end || !until()) {
    /* busy: no timer, no socket is served */
  }
}

/** The key's count as Redis has it now, read synchronously (redis-cli): the loop stays blocked. */
const countNow = (port: number, key: string): string =>
  execFileSync('redis-cli', ['-p', String(port), 'GET', key], { encoding: 'utf8' }).trim();

test('a loop blocked past the deadline right after the hit: the hit counts', async ({ batching, redis }) => {
  const { batching: store, observer } = batching;
  const before = observer.errors;
  const hit = store.hit([window('blocked-before-write')]);
  blockLoop(3 * TIMEOUT_MS); // the batch is written only after this, from setImmediate
  const [result] = await hit;
  expect(result).toMatchObject({ count: 1, allowed: true });
  expect(countNow(redis.port, 'blocked-before-write')).toBe('1');
  expect(observer.errors).toBe(before);
});

test('a reply that waits in the socket while the loop is blocked past the deadline counts', async ({
  batching,
  redis,
}) => {
  const { batching: store, observer } = batching;
  const before = observer.errors;
  const hit = store.hit([window('blocked-after-write')]);
  // After the batch's setImmediate: the script call is written to the socket.
  await new Promise((resolve) => setImmediate(resolve));
  // Redis has run the script (and so written its reply) once the count shows; the loop is held
  // three deadlines past that, so the deadline timer is long overdue when the loop resumes.
  blockLoop(3 * TIMEOUT_MS, () => countNow(redis.port, 'blocked-after-write') === '1');
  const [result] = await hit;
  expect(result).toMatchObject({ count: 1, allowed: true });
  expect(observer.errors).toBe(before);
});

test('a stopped Redis still fails the batch at the deadline', async ({ batching, redis }) => {
  const { batching: store, observer } = batching;
  const before = observer.errors;
  const frozen = redis.freeze();
  try {
    const failure = await store.hit([window('frozen')]).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(StoreUnavailableError);
    expect((failure as Error).message).toBe(`no reply within ${TIMEOUT_MS}ms`);
    expect(observer.errors).toBe(before + 1);
  } finally {
    frozen.thaw();
  }
});
