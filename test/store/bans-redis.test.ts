// The ban section of the window script on a real redis-server agrees with the reference model
// (test/helpers/ban-model.ts); bans are listed by a bounded SCAN and lifted; they expire in Redis.
import fc from 'fast-check';
import { expect } from 'vitest';
import { RedisStore } from '../../src/store/redis-store.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { banScenario, model, replay } from '../helpers/ban-model.js';
import { waitFor } from '../helpers/wait.js';

const test = serversTest.extend('redisStore', { scope: 'file' }, async ({ redis }, { onCleanup }) => {
  const store = new RedisStore({ url: redis.url, probeKey: 'tg:readiness-probe', connectTimeoutMs: 1000 });
  onCleanup(() => store.close());
  expect(await store.connect()).toBe(true);
  return store;
});

let run = 0;

test('Redis bans as the model does (strikes, bans, several limiters per request)', async ({ redisStore }) => {
  await fc.assert(
    fc.asyncProperty(banScenario(false), async ({ specs, steps }) => {
      const prefix = `run${run++}:`; // fresh keys for every run and shrink step
      expect(await replay(redisStore, prefix, specs, steps)).toEqual(model(specs, steps));
    }),
    { numRuns: 60 },
  );
});

test('a ban is listed with its end, lifted once, and expires by itself', async ({ redisStore }) => {
  const ban = {
    key: 'lst:{c}:l:ban',
    strikesKey: 'lst:{c}:l:strikes',
    after: 1,
    withinMs: 60_000,
    forMs: 60_000,
    span: 1,
  };
  const w = {
    key: 'lst:{c}:l:60000:ip',
    limit: 1,
    periodMs: 60_000,
    enforce: true,
    cacheWhenSpent: false,
    ban,
  };
  await redisStore.hit([w]);
  expect((await redisStore.hit([w]))[0]!.banStarted).toBe(true);
  const before = Date.now();
  const [banned] = await redisStore.hit([w]);
  expect(banned!.bannedUntilMs).toBeGreaterThan(before + 50_000);
  expect(banned!.bannedUntilMs).toBeLessThanOrEqual(Date.now() + 60_000);
  const listed = await redisStore.listBans('lst:', 10);
  expect(listed.truncated).toBe(false);
  expect(listed.bans.map((b) => b.key)).toEqual(['lst:{c}:l:ban']);
  // A prefix with glob characters matches itself only.
  expect(await redisStore.listBans('ls?:', 10)).toEqual({ bans: [], truncated: false });
  expect(await redisStore.liftBan(ban.key, ban.strikesKey)).toBe(true);
  expect(await redisStore.liftBan(ban.key, ban.strikesKey)).toBe(false);
  expect((await redisStore.hit([w]))[0]!.bannedUntilMs).toBeUndefined();

  // A ban of one second: Redis expires it.
  const short = {
    ...w,
    key: 'exp:{c}:l:60000:ip',
    ban: { ...ban, key: 'exp:{c}:l:ban', strikesKey: 'exp:{c}:l:strikes', forMs: 1000 },
  };
  await redisStore.hit([short]);
  expect((await redisStore.hit([short]))[0]!.banStarted).toBe(true);
  await waitFor(
    () => redisStore.listBans('exp:', 10),
    (l) => l.bans.length === 0,
    { what: 'the one-second ban to expire' },
  );
  expect((await redisStore.hit([short]))[0]).toMatchObject({ allowed: false, count: 1 });
});

test('listing stops at max and says truncated', async ({ redisStore, redisClient }) => {
  for (let i = 0; i < 5; i++) await redisClient.set(`many:{t${i}}:l:ban`, '1', 'PX', 60_000);
  const three = await redisStore.listBans('many:', 3);
  expect(three.bans).toHaveLength(3);
  expect(three.truncated).toBe(true);
  expect((await redisStore.listBans('many:', 5)).bans).toHaveLength(5);
});
