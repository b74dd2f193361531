// The batch script as a Redis function (src/store/redis-function.ts), on real redis-servers: one
// FCALL per call, the library loaded again when Redis lost it, two gateway versions' libraries side
// by side, EVALSHA on a Redis without FUNCTION, and the function answering as the script does.
import fc from 'fast-check';
import type { ChainableCommander, Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { BATCH_WINDOW_LUA, batchScriptArgs, parseBatchReply } from '../../src/store/batch-window-script.js';
import { runLengths } from '../../src/store/batch-window-runs.js';
import { BATCH_FUNCTION, BATCH_LIBRARY_NAME } from '../../src/store/redis-function.js';
import { RedisStore } from '../../src/store/redis-store.js';
import type { WindowRequest, WindowResult } from '../../src/store/window-store.js';
import { KEYS, pauseArb, requestWindowsArb, specArb } from '../helpers/batch-arbitraries.js';
import { RedisServer } from '../helpers/redis-server.js';
import { redisStoreTest } from '../helpers/redis-store.js';
import { requestFor } from '../limits/window-maths/reference-model.js';

const test = redisStoreTest();

const MINUTE = 60_000;
const window = (key: string, limit = 10): WindowRequest => ({
  key,
  limit,
  periodMs: MINUTE,
  enforce: true,
  cacheWhenSpent: false,
});

/** Calls of each command (and subcommand) Redis has run so far, every outcome (`calls` has the failed ones). */
async function commandCalls(client: Redis): Promise<Record<string, number>> {
  const info = await client.info('commandstats');
  const calls: Record<string, number> = {};
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),.*rejected_calls=(\d+)/gm))
    calls[m[1]!] = Number(m[2]) + Number(m[3]);
  return calls;
}

/** The libraries Redis holds: name → its functions' names. */
async function libraries(client: Redis): Promise<Record<string, string[]>> {
  const list = (await client.call('FUNCTION', 'LIST')) as unknown[][];
  const byName: Record<string, string[]> = {};
  for (const lib of list) {
    const fields = new Map<unknown, unknown>();
    for (let i = 0; i < lib.length; i += 2) fields.set(lib[i], lib[i + 1]);
    const functions = fields.get('functions') as unknown[][];
    byName[String(fields.get('library_name'))] = functions.map((f) => String(f[1]));
  }
  return byName;
}

const counts = async (store: RedisStore, key: string, times: number) => {
  const seen: number[] = [];
  for (let i = 0; i < times; i++) seen.push((await store.hit([window(key)]))[0]!.count);
  return seen;
};

test('out of memory (noeviction): a spent key is still refused (that call as the script), a new one fails at its write', async ({
  redisStore: store,
  redisClient,
}) => {
  const spent = `oom-${Date.now()}`;
  expect(await counts(store, spent, 2)).toEqual([1, 2]);
  for (let i = 0; i < 8; i++) await store.hit([window(spent)]);
  const [, before] = (await redisClient.config('GET', 'maxmemory-policy')) as string[];
  await redisClient.config('SET', 'maxmemory-policy', 'noeviction');
  await redisClient.config('SET', 'maxmemory', '1');
  try {
    const [refused] = await store.hit([window(spent)]);
    expect([refused!.allowed, refused!.count]).toEqual([false, 10]);
    await expect(store.hit([window(`${spent}-new`)])).rejects.toThrow(/OOM/);
    expect(store.usesFunctions).toBe(true); // functions stay on
  } finally {
    await redisClient.config('SET', 'maxmemory', '0');
    await redisClient.config('SET', 'maxmemory-policy', before!);
  }
});

test('calls go as FCALL of the versioned library; after FUNCTION FLUSH it is loaded again, the batch counted once', async ({
  redisStore: store,
  redisClient,
}) => {
  await redisClient.call('FUNCTION', 'FLUSH');
  const before = await commandCalls(redisClient);
  expect(await counts(store, 'flush:a', 3)).toEqual([1, 2, 3]);
  expect(await libraries(redisClient)).toEqual({ [BATCH_LIBRARY_NAME]: [BATCH_FUNCTION] });
  await redisClient.call('FUNCTION', 'FLUSH');
  expect(await counts(store, 'flush:a', 2)).toEqual([4, 5]);
  expect(await redisClient.get('flush:a')).toBe('5');
  const after = await commandCalls(redisClient);
  const grown = (command: string) => (after[command] ?? 0) - (before[command] ?? 0);
  // Five calls, and two refused as missing (one after each flush), each followed by one load.
  expect(grown('fcall')).toBe(7);
  expect(grown('function|load')).toBe(2);
  expect([grown('evalsha'), grown('eval')]).toEqual([0, 0]);
  expect(store.usesFunctions).toBe(true);
});

test("another version's library stays beside this one's, and still answers", async ({
  redisStore: store,
  redisClient,
}) => {
  const other = 'tollgate_0000000000000000';
  await redisClient.call('FUNCTION', 'FLUSH');
  await redisClient.call(
    'FUNCTION',
    'LOAD',
    `#!lua name=${other}\nredis.register_function('tollgate_batch_0000000000000000', function() return 'older' end)`,
  );
  expect(await counts(store, 'versions:a', 2)).toEqual([1, 2]);
  expect(await libraries(redisClient)).toEqual({
    [other]: ['tollgate_batch_0000000000000000'],
    [BATCH_LIBRARY_NAME]: [BATCH_FUNCTION],
  });
  expect(await redisClient.call('FCALL', 'tollgate_batch_0000000000000000', '0')).toBe('older');
});

describe('a Redis without FUNCTION (renamed away, as on Redis < 7 it is missing)', () => {
  test('runs the script by EVALSHA, found out at the first call and kept', async ({ onTestFinished }) => {
    const redis = await RedisServer.start(undefined, ['--rename-command', 'FUNCTION', '']);
    onTestFinished(() => redis.kill());
    const inspect = redis.client();
    onTestFinished(() => inspect.disconnect());
    const store = new RedisStore({ url: redis.url, probeKey: 'tg:readiness-probe', connectTimeoutMs: 1000 });
    onTestFinished(() => store.close());
    expect(await store.connect()).toBe(true);
    expect(await counts(store, 'old:a', 4)).toEqual([1, 2, 3, 4]);
    expect(await store.readiness()).toEqual({ ready: true });
    const calls = await commandCalls(inspect);
    // One FCALL (the function missing), the FUNCTION LOAD refused as unknown, then scripts only:
    // an EVALSHA refused (NOSCRIPT) and an EVAL, then EVALSHA for the other three and the probe.
    expect([calls.fcall, calls.eval, calls.evalsha]).toEqual([1, 1, 5]);
    expect(store.usesFunctions).toBe(false);
  });
});

// store.redis.functions: false, for a proxy in front of Redis that refuses FCALL in words of its own.
test('functions: false runs the script by EVALSHA from the first call, never FCALL', async ({
  redis,
  redisClient,
  onTestFinished,
}) => {
  const store = new RedisStore({
    url: redis.url,
    probeKey: 'tg:readiness-probe',
    connectTimeoutMs: 1000,
    functions: false,
  });
  onTestFinished(() => store.close());
  expect(await store.connect()).toBe(true);
  const before = await commandCalls(redisClient);
  expect(await counts(store, 'no-functions:a', 3)).toEqual([1, 2, 3]);
  const after = await commandCalls(redisClient);
  const grown = (command: string) => (after[command] ?? 0) - (before[command] ?? 0);
  expect(grown('fcall')).toBe(0);
  expect(grown('function|load')).toBe(0);
  expect(grown('evalsha') + grown('eval')).toBeGreaterThanOrEqual(3);
  expect(store.usesFunctions).toBe(false);
});

/** All of a result but a fixed window's reset, which reads Redis' own clock (PTTL) at the call. */
const shape = (r: WindowResult, fixed: boolean) => ({
  count: r.count,
  allowed: r.allowed,
  banned: r.bannedUntilMs !== undefined, // its end is the ban key's PTTL: Redis' clock again
  banStarted: r.banStarted,
  ...(fixed ? {} : { resetAtMs: r.resetAtMs, retryAtMs: r.retryAtMs }),
});

const turnsArb = fc.record({
  specs: fc.tuple(specArb, specArb, specArb),
  banAfter: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
  turns: fc.array(
    fc.record({
      pauseMs: pauseArb,
      requests: fc.array(
        fc.record({
          windows: requestWindowsArb,
          times: fc.integer({ min: 1, max: 6 }),
        }),
        { minLength: 1, maxLength: 6 },
      ),
    }),
    { minLength: 1, maxLength: 6 },
  ),
});

let run = 0;

test('the function answers every batch as the script (EVAL) does, and leaves the same keys', async ({
  redisStore: store,
  redisClient,
}) => {
  await store.runScript(batchScriptArgs([[window('same-load')]], Date.now())); // the library loaded
  // Each turn's two calls, and the reads, in one MULTI: the keys' expiries (Redis' clock, while the
  // scenario's clock is its own) are judged at one instant for both, however loaded the machine.
  const atOnce = async (build: (m: ChainableCommander) => ChainableCommander): Promise<unknown[]> =>
    ((await build(redisClient.multi()).exec()) ?? []).map(([err, reply]) => {
      if (err) throw err;
      return reply;
    });
  await fc.assert(
    fc.asyncProperty(turnsArb, async (scenario) => {
      const n = run++;
      const prefixes = [`same-fn${n}:`, `same-script${n}:`] as const;
      let now = Date.now();
      for (const turn of scenario.turns) {
        now += turn.pauseMs;
        const batches = prefixes.map((prefix) =>
          turn.requests.flatMap((r) => {
            const request = r.windows.map((w) => {
              const spec = scenario.specs[KEYS.indexOf(w.key)]!;
              const made = requestFor(prefix + w.key, spec, w.enforce, w.cost);
              // Key 'a' may carry a ban (its limiter: that one window), struck after banAfter refusals.
              if (w.key !== 'a' || scenario.banAfter === undefined) return made;
              const ban = { key: `${prefix}ban`, strikesKey: `${prefix}strikes`, after: scenario.banAfter };
              return { ...made, ban: { ...ban, withinMs: MINUTE, forMs: MINUTE, span: 1 } };
            });
            return Array.from({ length: r.times }, () => request);
          }),
        );
        const [fnArgs, scriptArgs] = batches.map((batch) => batchScriptArgs(batch, now));
        const replies = (await atOnce((m) =>
          m.fcall(BATCH_FUNCTION, ...fnArgs!).eval(BATCH_WINDOW_LUA, ...scriptArgs!),
        )) as unknown[][];
        const [fn, script] = batches.map((batch, i) =>
          parseBatchReply(batch, replies[i]!, now, runLengths(batch)).map((rs, r) =>
            rs.map((res, w) => shape(res, batch[r]![w]!.algorithm === undefined)),
          ),
        );
        expect(fn).toEqual(script);
        expect(replies[0]!.length).toBe(replies[1]!.length);
      }
      const names = [...KEYS, 'ban', 'strikes'];
      const stored = await atOnce((m) => {
        for (const prefix of prefixes) for (const k of names) m.get(prefix + k);
        return m;
      });
      expect(stored.slice(0, names.length)).toEqual(stored.slice(names.length));
    }),
    { numRuns: 60 },
  );
});
