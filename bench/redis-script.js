// `node bench/redis-script.js [checkout…]`: Redis' own cost per request for the window script, the
// gateway left out. For each algorithm and batch size it sends batches as the gateway builds them
// (every request of a batch on one key, as one client's requests are; and every request on a key
// of its own), one call at a time: for each checkout named (default: this one) its script by
// EVALSHA and, when the checkout has the function library (dist/store/redis-function.js), its
// function by FCALL. Beside them, the floors: the same call (the last checkout's KEYS and ARGV)
// to a script and a function that do nothing, and to a script that builds a reply of that length, so what
// the script's own work costs is told apart from what any script call of that size costs. A batch
// of identical requests goes as one run (see docs/store.md), so the floors' ARGV and reply are a
// run's.
// Two measures: by default Redis' CPU (INFO cpu: the script, the protocol and the socket's system
// calls, so it moves with the machine's load) and the script's run alone (INFO commandstats), the
// lowest of TRIALS trials; with CALLGRIND=1, redis-server runs under valgrind's callgrind and each
// cell counts its instructions per request (load-independent; serverCron, Redis' timer work, left
// out; instrumentation on only for the cell's calls; needs valgrind).
// Each checkout named must be built (its dist/store/batch-window-script.js).
// Settings: REQUESTS (per cell: 40000, 240 under callgrind), SIZES (comma-separated batch sizes,
// 1,8,32), TRIALS (5), ALGORITHMS (fixed,sliding,token-bucket), KEYS (one,own: one key per batch,
// a key per request).
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { freePort, redisServerArgs, ROOT, startNode, stopAll, waitForRedis } from './lib/processes.js';
import { parseCpuUs } from './lib/redis-stats.js';

const CALLGRIND = process.env.CALLGRIND === '1';
const REQUESTS = Number(process.env.REQUESTS ?? (CALLGRIND ? 240 : 40_000));
const SIZES = (process.env.SIZES ?? '1,8,32').split(',').map(Number);
const TRIALS = CALLGRIND ? 1 : Number(process.env.TRIALS ?? 5);
const ALGORITHMS = (process.env.ALGORITHMS ?? 'fixed,sliding,token-bucket').split(',');
const SHARING = (process.env.KEYS ?? 'one,own').split(',').map((k) => k === 'one');
const checkouts = process.argv.length > 2 ? process.argv.slice(2).map((p) => resolve(p)) : [ROOT];
const run = promisify(execFile);

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
function batchOf(algorithm, size, shared, n) {
  return Array.from({ length: size }, (_, i) => [
    window(`tg:{${shared ? 'ip' : `ip${i}`}}:${algorithm}:${n}`, algorithm),
  ]);
}

// The floors: a script that returns at once, and one that returns as many values as the window
// script does (its reply's length, appended to ARGV), without reading any key.
const EMPTY_LUA = 'return 0';
const REPLY_LUA = 'local t = {} for i = 1, tonumber(ARGV[#ARGV]) do t[i] = 0 end return t';
// And a function that returns at once: the floor of an FCALL.
const EMPTY_LIBRARY =
  "#!lua name=bench_floor\nredis.register_function('bench_empty', function() return 0 end)";

const sha1 = (s) => createHash('sha1').update(s).digest('hex');

/** µs of script execution (INFO commandstats: EVALSHA and FCALL) so far. */
async function scriptUs(redis) {
  const info = await redis.info('commandstats');
  let us = 0;
  for (const m of info.matchAll(/^cmdstat_(?:evalsha|fcall):calls=\d+,usec=(\d+)/gm)) us += Number(m[1]);
  return us;
}

/** redis-server under callgrind, instrumentation off until a cell turns it on. */
async function startCallgrind(port) {
  const dir = mkdtempSync(join(tmpdir(), 'redis-callgrind-'));
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      `--callgrind-out-file=${join(dir, 'callgrind.out.%p')}`,
      'redis-server',
      ...redisServerArgs(port),
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const proc = {
    name: 'redis-server (callgrind)',
    child,
    lines: [],
    get alive() {
      return child.exitCode === null && child.signalCode === null;
    },
  };
  const stop = async () => {
    if (proc.alive) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', () => proc.alive && child.kill('SIGKILL'));
  return { proc, dir, pid: child.pid, stop };
}

/** Instructions in `dump` (callgrind's totals) less serverCron's inclusive share. */
async function instructions(dump) {
  const { stdout } = await run('callgrind_annotate', ['--inclusive=yes', '--threshold=100', dump], {
    maxBuffer: 64 << 20,
  });
  const number = (s) => Number(s.replace(/,/g, ''));
  const total = number(/^([\d,]+).*PROGRAM TOTALS/m.exec(stdout)?.[1] ?? 'NaN');
  const cron = /^\s*([\d,]+) .*[:\s]serverCron[\s'[]/m.exec(stdout);
  return total - (cron ? number(cron[1]) : 0);
}

/** Measures `send` sent `calls` times: Redis CPU µs (and run alone) per request, or instructions. */
async function measure(redis, grind, send, calls, requestsPerCall) {
  const n = calls * requestsPerCall;
  if (grind) {
    await run('callgrind_control', ['--zero', String(grind.pid)]);
    await run('callgrind_control', ['--instr=on', String(grind.pid)]);
    for (let i = 0; i < calls; i++) await send();
    await run('callgrind_control', ['--instr=off', String(grind.pid)]);
    await run('callgrind_control', ['--dump=cell', String(grind.pid)]);
    const dumps = readdirSync(grind.dir).filter((f) => /^callgrind\.out\.\d+\.\d+$/.test(f));
    const last = dumps.sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop())).pop();
    const dump = join(grind.dir, last);
    const count = await instructions(dump);
    rmSync(dump);
    return (count / n / 1000).toFixed(1);
  }
  let best;
  for (let t = 0; t < TRIALS; t++) {
    const each = Math.ceil(calls / TRIALS);
    const [cpu0, run0] = [parseCpuUs(await redis.info('cpu')), await scriptUs(redis)];
    for (let i = 0; i < each; i++) await send();
    const [cpu1, run1] = [parseCpuUs(await redis.info('cpu')), await scriptUs(redis)];
    const m = {
      cpu: (cpu1 - cpu0) / (each * requestsPerCall),
      run: (run1 - run0) / (each * requestsPerCall),
    };
    best = best ? { cpu: Math.min(best.cpu, m.cpu), run: Math.min(best.run, m.run) } : m;
  }
  return `${best.cpu.toFixed(2)} (${best.run.toFixed(2)})`;
}

/** The ways each checkout's script is sent: EVALSHA, and FCALL when it has the library. */
async function waysOf(redis, checkout) {
  const dist = join(checkout, 'dist', 'store');
  const mod = await import(pathToFileURL(join(dist, 'batch-window-script.js')).href);
  await redis.script('LOAD', mod.BATCH_WINDOW_LUA);
  const sha = sha1(mod.BATCH_WINDOW_LUA);
  const ways = [
    { label: `EVALSHA ${checkout}`, args: mod.batchScriptArgs, send: (a) => redis.evalsha(sha, ...a) },
  ];
  if (existsSync(join(dist, 'redis-function.js'))) {
    const lib = await import(pathToFileURL(join(dist, 'redis-function.js')).href);
    await redis.call('FUNCTION', 'LOAD', 'REPLACE', lib.BATCH_LIBRARY);
    const fn = lib.BATCH_FUNCTION;
    ways.push({ label: `FCALL ${checkout}`, args: mod.batchScriptArgs, send: (a) => redis.fcall(fn, ...a) });
  }
  return ways;
}

async function main() {
  const port = await freePort();
  const grind = CALLGRIND ? await startCallgrind(port) : undefined;
  const proc =
    grind?.proc ?? startNode('redis-server', 'bench/servers/redis.js', { env: { PORT: String(port) } });
  const redis = await waitForRedis(proc, port, CALLGRIND ? 60_000 : 10_000);
  try {
    const version = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1];
    console.log(
      `redis-server ${version}; ${REQUESTS} requests per cell, one call at a time; ` +
        (CALLGRIND
          ? 'each figure: thousands of redis-server instructions per request (callgrind, serverCron left out)'
          : `the lowest of ${TRIALS} trials; each figure: Redis CPU µs per request (INFO cpu), and in brackets ` +
            'the script run alone (INFO commandstats usec)'),
    );
    const ways = [];
    for (const checkout of checkouts) ways.push(...(await waysOf(redis, checkout)));
    for (const lua of [EMPTY_LUA, REPLY_LUA]) await redis.script('LOAD', lua);
    await redis.call('FUNCTION', 'LOAD', 'REPLACE', EMPTY_LIBRARY);
    const floors = ['empty script', 'empty function', 'same-size reply'];
    console.log(['algorithm', 'keys', 'batch', ...ways.map((w) => w.label), ...floors].join('\t'));
    let n = 0;
    for (const algorithm of ALGORITHMS) {
      for (const shared of SHARING) {
        for (const size of SIZES) {
          if (!shared && size === 1) continue; // a batch of one is on one key either way
          const calls = Math.max(1, Math.round(REQUESTS / size));
          const row = [algorithm, shared ? 'one' : 'one per request', size];
          for (const way of ways) {
            const args = way.args(batchOf(algorithm, size, shared, n++));
            await way.send(args); // the keys exist: a steady state, not a first hit
            row.push(await measure(redis, grind, () => way.send(args), calls, size));
          }
          // The floors take the last way's arguments, and its reply's length as one more ARGV.
          const last = ways[ways.length - 1];
          const floorArgs = last.args(batchOf(algorithm, size, shared, n++));
          const args = [...floorArgs, (await last.send(floorArgs)).length];
          const empty = () => redis.evalsha(sha1(EMPTY_LUA), ...args);
          const emptyFunction = () => redis.fcall('bench_empty', ...args);
          const reply = () => redis.evalsha(sha1(REPLY_LUA), ...args);
          for (const send of [empty, emptyFunction, reply])
            row.push(await measure(redis, grind, send, calls, size));
          console.log(row.join('\t'));
        }
      }
    }
  } finally {
    redis.disconnect();
    await grind?.stop();
  }
}

main()
  .catch((err) => {
    console.error(`[redis-script] ${err.stack ?? err.message}`);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
