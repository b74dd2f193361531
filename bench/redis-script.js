// `node bench/redis-script.js [checkout…]`: Redis' own CPU per request for the window script, the
// gateway left out. For each algorithm and batch size it sends batches as the gateway builds them
// (every request of a batch on one key, as one client's requests are; and, for fixed windows,
// every request on a key of its own), one EVALSHA at a time, and reads redis-server's CPU
// (INFO cpu) before and after. Beside each: the floor, the same call as the last checkout's (same
// KEYS and ARGV) to a script that does nothing, and to one that only builds a reply of the same
// length, so what the script's own work costs is told apart from what any script call of that size
// costs. A batch of identical requests goes as one run (see docs/store.md), so the floors' ARGV
// and reply are a run's.
// Each checkout named (default: this one) must be built (its dist/store/batch-window-script.js).
// Settings: REQUESTS (per cell, 40000), SIZES (comma-separated batch sizes, 1,8,32), TRIALS (5).
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePort, ROOT, startNode, stopAll, waitForRedis } from './lib/processes.js';
import { parseCpuUs } from './lib/redis-stats.js';

const REQUESTS = Number(process.env.REQUESTS ?? 40_000);
const SIZES = (process.env.SIZES ?? '1,8,32').split(',').map(Number);
const TRIALS = Number(process.env.TRIALS ?? 5);
const checkouts = process.argv.length > 2 ? process.argv.slice(2).map((p) => resolve(p)) : [ROOT];

const HOUR = 3_600_000;
const window = (key, algorithm) => ({
  key,
  limit: 1_000_000_000,
  periodMs: HOUR,
  enforce: true,
  cacheWhenSpent: false,
  ...(algorithm === 'fixed' ? {} : { algorithm }),
  ...(algorithm === 'token-bucket' ? { rate: 1_000_000_000 } : {}),
});

/** One batch of `size` requests: all on one key, or each on its own. */
function batchOf(algorithm, size, shared, run) {
  return Array.from({ length: size }, (_, i) => [
    window(`tg:{${shared ? 'ip' : `ip${i}`}}:${algorithm}:${run}`, algorithm),
  ]);
}

// The floors: a script that returns at once, and one that returns as many values as the window
// script does (its reply's length, appended to ARGV), without reading any key.
const EMPTY_LUA = 'return 0';
const REPLY_LUA = 'local t = {} for i = 1, tonumber(ARGV[#ARGV]) do t[i] = 0 end return t';

const sha1 = (s) => createHash('sha1').update(s).digest('hex');

/** µs of EVALSHA execution (INFO commandstats) so far. */
async function evalshaUs(redis) {
  const m = /^cmdstat_evalsha:calls=\d+,usec=(\d+)/m.exec(await redis.info('commandstats'));
  return m ? Number(m[1]) : 0;
}

/**
 * Per request, of `calls` sends of `args` to the script `sha`: Redis' CPU (INFO cpu: the script,
 * the protocol and the socket's system calls) and the script's run alone (commandstats usec).
 */
async function measureOnce(redis, sha, args, calls, requestsPerCall) {
  const [cpu0, run0] = [parseCpuUs(await redis.info('cpu')), await evalshaUs(redis)];
  for (let i = 0; i < calls; i++) await redis.evalsha(sha, ...args);
  const [cpu1, run1] = [parseCpuUs(await redis.info('cpu')), await evalshaUs(redis)];
  const n = calls * requestsPerCall;
  return { cpu: (cpu1 - cpu0) / n, run: (run1 - run0) / n };
}

/** The lowest of TRIALS measurements (others' load on the machine only ever adds). */
async function measure(redis, sha, args, calls, requestsPerCall) {
  let best;
  for (let t = 0; t < TRIALS; t++) {
    const m = await measureOnce(redis, sha, args, Math.ceil(calls / TRIALS), requestsPerCall);
    best = best ? { cpu: Math.min(best.cpu, m.cpu), run: Math.min(best.run, m.run) } : m;
  }
  return `${best.cpu.toFixed(2)} (${best.run.toFixed(2)})`;
}

async function main() {
  const port = await freePort();
  const proc = startNode('redis-server', 'bench/servers/redis.js', { env: { PORT: String(port) } });
  const redis = await waitForRedis(proc, port);
  const version = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1];
  console.log(
    `redis-server ${version}; ${REQUESTS} requests per cell, one EVALSHA at a time, the lowest of ${TRIALS} ` +
      'trials; each figure: Redis CPU µs per request (INFO cpu), and in brackets the script run alone ' +
      '(INFO commandstats usec)',
  );
  const builds = [];
  for (const checkout of checkouts) {
    const mod = await import(pathToFileURL(join(checkout, 'dist', 'store', 'batch-window-script.js')).href);
    await redis.script('LOAD', mod.BATCH_WINDOW_LUA);
    builds.push({ checkout, sha: sha1(mod.BATCH_WINDOW_LUA), args: mod.batchScriptArgs });
  }
  for (const lua of [EMPTY_LUA, REPLY_LUA]) await redis.script('LOAD', lua);
  const head = ['algorithm', 'keys', 'batch', ...checkouts.map((c) => `script µs/req ${c}`)];
  head.push('empty script µs/req', 'same-size reply µs/req');
  console.log(head.join('\t'));
  let run = 0;
  for (const algorithm of ['fixed', 'sliding', 'token-bucket']) {
    for (const shared of algorithm === 'fixed' ? [true, false] : [true]) {
      for (const size of SIZES) {
        const calls = Math.max(1, Math.round(REQUESTS / size));
        const row = [algorithm, shared ? 'one' : 'one per request', size];
        for (const build of builds) {
          const args = build.args(batchOf(algorithm, size, shared, run++));
          await redis.evalsha(build.sha, ...args); // the keys exist: a steady state, not a first hit
          row.push(await measure(redis, build.sha, args, calls, size));
        }
        // The floors take the last build's arguments, and its reply's length as one more ARGV.
        const last = builds[builds.length - 1];
        const floorArgs = last.args(batchOf(algorithm, size, shared, run++));
        const replied = await redis.evalsha(last.sha, ...floorArgs);
        const args = [...floorArgs, replied.length];
        row.push(await measure(redis, sha1(EMPTY_LUA), args, calls, size));
        row.push(await measure(redis, sha1(REPLY_LUA), args, calls, size));
        console.log(row.join('\t'));
      }
    }
  }
  redis.disconnect();
}

main()
  .catch((err) => {
    console.error(`[redis-script] ${err.stack ?? err.message}`);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
