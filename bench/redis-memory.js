// `node bench/redis-memory.js`: Redis memory per key for each kind of key the window script keeps
// (fixed window, sliding window, token bucket, ban, strikes), on a real redis-server, written by
// the script itself (this checkout's dist/). Two figures per kind: MEMORY USAGE of one key (its
// name, value and dictionary entry, as Redis accounts them), and used_memory grown over KEYS keys
// of that kind, divided by KEYS (also the expiry entry and the hash tables' share).
// Keys are named as the gateway names them: `tg:{<22-character tag>}:<limiter>:<period>:<parts>`.
// Settings: KEYS (10000).
import { createHash } from 'node:crypto';
import { freePort, startNode, stopAll, waitForRedis } from './lib/processes.js';
import { BATCH_WINDOW_LUA, batchScriptArgs } from '../dist/store/batch-window-script.js';

const COUNT = Number(process.env.KEYS ?? 10_000);
const SHA = createHash('sha1').update(BATCH_WINDOW_LUA).digest('hex');
const MINUTE = 60_000;

/** A tag as the gateway makes one (22 characters of base64url). */
const tag = (i) => createHash('sha256').update(String(i)).digest('base64url').slice(0, 22);

const base = { limit: 100_000, periodMs: MINUTE, enforce: true, cacheWhenSpent: false };
const KINDS = [
  { kind: 'fixed window', window: (i) => ({ ...base, key: `tg:{${tag(i)}}:api:60000:ip` }) },
  {
    kind: 'sliding window',
    window: (i) => ({ ...base, key: `tg:{${tag(i)}}:api:60000.sliding:ip`, algorithm: 'sliding' }),
  },
  {
    kind: 'token bucket',
    window: (i) => ({
      ...base,
      key: `tg:{${tag(i)}}:api:60000.token-bucket:ip`,
      algorithm: 'token-bucket',
      rate: 10, // a token every 6 s: the key lives until the bucket is full again
    }),
  },
];

/** A limit of 1 with a ban after 2 strikes: hits 2 and 3 are strikes, the 3rd starts the ban. */
const banned = (i, who) => ({
  ...base,
  limit: 1,
  key: `tg:{${tag(i)}}:${who}:60000:ip`,
  ban: {
    key: `tg:{${tag(i)}}:${who}:ban`,
    strikesKey: `tg:{${tag(i)}}:${who}:strikes`,
    after: 2,
    withinMs: MINUTE,
    forMs: MINUTE,
    span: 1,
  },
});

const hit = (redis, windows, times = 1) =>
  redis.evalsha(SHA, ...batchScriptArgs(Array.from({ length: times }, () => windows)));

async function usedMemory(redis) {
  return Number(/^used_memory:(\d+)/m.exec(await redis.info('memory'))[1]);
}

/** used_memory grown by `make` over COUNT keys, per key, from an empty Redis (the same table sizes for each). */
async function grownPerKey(redis, make) {
  await redis.flushall();
  const before = await usedMemory(redis);
  for (let i = 0; i < COUNT; i += 100) {
    const pipeline = redis.pipeline();
    for (let j = i; j < Math.min(COUNT, i + 100); j++) make(pipeline, j);
    await pipeline.exec();
  }
  return ((await usedMemory(redis)) - before) / COUNT;
}

async function main() {
  const port = await freePort();
  const proc = startNode('redis-server', 'bench/servers/redis.js', { env: { PORT: String(port) } });
  const redis = await waitForRedis(proc, port);
  await redis.script('LOAD', BATCH_WINDOW_LUA);
  const version = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1];
  console.log(`redis-server ${version}; MEMORY USAGE of one key, and used_memory grown over ${COUNT} keys`);
  console.log('key\texample\tMEMORY USAGE bytes\tused_memory bytes per key');
  const rows = [];
  let at = 0;
  for (const { kind, window } of KINDS) {
    // One hit, and 1,000 hits at once (a count past Redis' shared integers).
    for (const hits of [1, 1000]) {
      const first = at;
      const w = { ...window(first), cost: hits };
      await hit(redis, [w]);
      const usage = await redis.call('MEMORY', 'USAGE', w.key, 'SAMPLES', '0');
      at += COUNT;
      const grown = await grownPerKey(redis, (p, j) =>
        p.evalsha(SHA, ...batchScriptArgs([[{ ...window(first + 1 + j), cost: hits }]])),
      );
      rows.push([`${kind}, ${hits} hit${hits > 1 ? 's' : ''}`, w.key, usage, grown]);
      at += 1;
    }
  }
  // A ban and its strikes: a hit that passes, then a refused one (a strike), then one more (the
  // second strike: the ban starts and the strikes are deleted).
  const b = banned(at, 'api');
  await hit(redis, [b], 2);
  const strikes = await redis.call('MEMORY', 'USAGE', b.ban.strikesKey, 'SAMPLES', '0');
  await hit(redis, [b]);
  const ban = await redis.call('MEMORY', 'USAGE', b.ban.key, 'SAMPLES', '0');
  const twice = (j) => [[banned(j, 'b')], [banned(j, 'b')]];
  const strikesGrown = await grownPerKey(redis, (p, j) => p.evalsha(SHA, ...batchScriptArgs(twice(j))));
  rows.push(['strikes (used_memory: with its window key)', b.ban.strikesKey, strikes, strikesGrown]);
  const thrice = (j) => [...twice(j), [banned(j, 'b')]];
  const banGrown = await grownPerKey(redis, (p, j) => p.evalsha(SHA, ...batchScriptArgs(thrice(j))));
  rows.push(['ban (used_memory: with its window key)', b.ban.key, ban, banGrown]);
  for (const r of rows) console.log([r[0], r[1], r[2], r[3].toFixed(1)].join('\t'));
  console.log(
    'used_memory of the ban and strikes rows: with the window key the same requests made (a ban deletes the strikes)',
  );
  redis.disconnect();
}

main()
  .catch((err) => {
    console.error(`[redis-memory] ${err.stack ?? err.message}`);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
