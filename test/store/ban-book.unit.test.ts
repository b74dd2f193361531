// The memory store's penalty boxes agree with the reference model (test/helpers/ban-model.ts), on
// an injected clock: strikes counted from the first, bans that end, windows that reset.
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { MemoryStore } from '../../src/store/memory-store.js';
import { banScenario, model, replay } from '../helpers/ban-model.js';

test('memory store bans as the model does, over time', async () => {
  await fc.assert(
    fc.asyncProperty(banScenario(true), async ({ specs, steps }) => {
      let now = 1_000_000;
      const store = new MemoryStore({ maxKeys: 1000, sweepIntervalMs: 60_000, now: () => now });
      try {
        const got = await replay(store, 'tg:', specs, steps, (ms) => (now += ms));
        expect(got).toEqual(model(specs, steps));
      } finally {
        await store.close();
      }
    }),
    { numRuns: 300 },
  );
});

test('a banned request reports when its ban ends; listing and lifting', async () => {
  let now = 1_000_000;
  const store = new MemoryStore({ maxKeys: 1000, sweepIntervalMs: 60_000, now: () => now });
  const ban = {
    key: 'tg:{c}:l:ban',
    strikesKey: 'tg:{c}:l:strikes',
    after: 2,
    withinMs: 10_000,
    forMs: 30_000,
    span: 1,
  };
  const w = {
    key: 'tg:{c}:l:60000:ip',
    limit: 1,
    periodMs: 60_000,
    enforce: true,
    cacheWhenSpent: false,
    ban,
  };
  expect((await store.hit([w]))[0]).toEqual({ count: 1, limit: 1, resetAtMs: now + 60_000, allowed: true });
  expect((await store.hit([w]))[0]!.banStarted).toBeUndefined();
  now += 1000;
  expect((await store.hit([w]))[0]).toEqual({
    count: 1,
    limit: 1,
    resetAtMs: 1_060_000,
    allowed: false,
    banStarted: true,
  });
  const bannedAt = now;
  now += 5000;
  expect((await store.hit([w]))[0]!.bannedUntilMs).toBe(bannedAt + 30_000);
  expect(await store.listBans('tg:', 10)).toEqual({
    bans: [{ key: 'tg:{c}:l:ban', untilMs: bannedAt + 30_000 }],
    truncated: false,
  });
  expect(await store.listBans('other:', 10)).toEqual({ bans: [], truncated: false });
  expect(await store.liftBan(ban.key, ban.strikesKey)).toBe(true);
  expect(await store.liftBan(ban.key, ban.strikesKey)).toBe(false);
  expect((await store.hit([w]))[0]!.bannedUntilMs).toBeUndefined();
  await store.close();
});
