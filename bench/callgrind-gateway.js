// Instructions per request of tollgate's main thread, load-independent: tollgate (dist/cli.js,
// bench/gateway.yaml with requests.shedAfter: 0) runs under callgrind with instrumentation off;
// an undici Pool of CONNECTIONS keep-alive connections (pipelining 1) POSTs /bench/forward WARMUP
// times, then instrumentation is switched on for MEASURED requests and off, and the output is
// dumped. Redis (STORE=redis, the default; STORE=memory: none) runs unslowed beside it.
//
//   flock /tmp/bench.lock timeout 900 nice -n 10 node bench/callgrind-gateway.js OUT_DIR
//
// Env: STORE, CONFIG (bench/gateway.yaml), CONNECTIONS (32), WARMUP (6000), MEASURED (3000), REDIS_BATCH_WINDOW, TOLLGATE_ENV
// (extra KEY=VALUE,... for the gateway), BENCH_PATH (/bench/forward; a /bench/flood* route for the
// 429 path: every answer after the first is the over-limit cache's 429), BENCH_SERVER (in
// tollgate's place: refusal-floor, the 429 path's floor; undici-stream, bare forwarding). Prints
// the main thread's instructions per request (and the GC's, inclusive Heap::CollectGarbage),
// script calls per request; writes OUT_DIR/callgrind.out.* for bench/callgrind-steps.js.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { ROOT, freePort, redisServerArgs } from './lib/processes.js';

const out = resolve(process.argv[2] ?? 'bench/callgrind');
const store = process.env.STORE ?? 'redis';
const connections = Number(process.env.CONNECTIONS ?? 32);
const warmup = Number(process.env.WARMUP ?? 6000);
const measured = Number(process.env.MEASURED ?? 3000);
const BODY = '{"event":"bench"}';
const path = process.env.BENCH_PATH ?? '/bench/forward';
const expected = path.startsWith('/bench/flood') ? 429 : 200;
mkdirSync(out, { recursive: true });

const children = [];
const start = (command, args, env = {}) => {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: 'inherit' });
  children.push(child);
  return child;
};
const stopAll = () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
};
process.on('exit', stopAll);

async function waitFor(port, path = '/') {
  for (let i = 0; i < 600; i++) {
    try {
      const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 1 });
      const res = await pool.request({ path, method: 'GET' });
      await res.body.dump();
      await pool.close();
      return;
    } catch {
      await sleep(500);
    }
  }
  throw new Error(`nothing listens on ${port}`);
}

const upstreamPort = await freePort();
start(process.execPath, ['bench/servers/upstream.js'], { PORT: String(upstreamPort) });
let redis;
const env = { UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}`, LOG_LEVEL: 'warn' };
if (store === 'redis') {
  const redisPort = await freePort();
  start('redis-server', redisServerArgs(redisPort));
  env.REDIS_URL = `redis://127.0.0.1:${redisPort}`;
  await sleep(300);
  redis = new Redis(env.REDIS_URL);
}
if (process.env.REDIS_BATCH_WINDOW) env.REDIS_BATCH_WINDOW = process.env.REDIS_BATCH_WINDOW;
for (const kv of (process.env.TOLLGATE_ENV ?? '').split(',').filter(Boolean)) {
  const at = kv.indexOf('=');
  env[kv.slice(0, at)] = kv.slice(at + 1);
}
const config = join(out, 'gateway.yaml');
writeFileSync(
  config,
  `${readFileSync(resolve(ROOT, process.env.CONFIG ?? 'bench/gateway.yaml'), 'utf8')}\nrequests:\n  shedAfter: 0\n`,
);
// The bench's bare servers, as BENCH_SERVER names them.
const BARE = {
  'refusal-floor': ['bench/servers/refusal-floor.js'],
  'undici-stream': ['bench/servers/undici-proxy.js'],
};
const port = await freePort();
const gateway = start(
  'valgrind',
  [
    '--tool=callgrind',
    '--instr-atstart=no',
    '--separate-threads=yes',
    '--dump-instr=no',
    `--callgrind-out-file=${join(out, 'callgrind.out.%p')}`,
    process.execPath,
    '--perf-basic-prof',
    ...(BARE[process.env.BENCH_SERVER] ?? ['dist/cli.js', 'start', '--config', config]),
  ],
  { ...env, UNDICI_MODE: 'stream', PORT: String(port), ADMIN_PORT: String(await freePort()) },
);
await waitFor(port);

const pool = new Pool(`http://127.0.0.1:${port}`, { connections, pipelining: 1 });
async function send(n) {
  let left = n;
  const worker = async () => {
    while (left-- > 0) {
      const res = await pool.request({
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: BODY,
      });
      await res.body.dump();
      if (res.statusCode !== expected && !(expected === 429 && res.statusCode === 200))
        throw new Error(`status ${res.statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
}
const scriptCalls = async () => {
  if (!redis) return 0;
  const info = await redis.info('commandstats');
  let calls = 0;
  for (const m of info.matchAll(/cmdstat_(evalsha|eval|fcall)[^:]*:calls=(\d+)/g)) calls += Number(m[2]);
  return calls;
};

await send(warmup);
const before = await scriptCalls();
execFileSync('callgrind_control', ['-i', 'on', String(gateway.pid)], { stdio: 'ignore' });
await send(measured);
execFileSync('callgrind_control', ['-i', 'off', String(gateway.pid)], { stdio: 'ignore' });
const calls = (await scriptCalls()) - before;
execFileSync('callgrind_control', ['-d', String(gateway.pid)], { stdio: 'ignore' });
await pool.close();
await redis?.quit();
gateway.kill('SIGTERM');
await new Promise((r) => gateway.once('exit', r));
stopAll();

// The main thread's part of the dump (callgrind_control -d): callgrind.out.<pid>.1-01.
const mainFile = `callgrind.out.${gateway.pid}.1-01`;
const main = {
  f: mainFile,
  ir: Number(/^totals:\s+(\d+)/m.exec(readFileSync(join(out, mainFile), 'utf8'))[1]),
};
const annotated = execFileSync(
  'callgrind_annotate',
  ['--inclusive=yes', '--threshold=100', join(out, main.f)],
  {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  },
);
writeFileSync(join(out, `${main.f}.inclusive.txt`), annotated);
// V8's perf map names the JIT's code for bench/callgrind-steps.js.
renameSync(`/tmp/perf-${gateway.pid}.map`, join(out, `perf-${gateway.pid}.map`));
for (const f of readdirSync(ROOT))
  if (f.endsWith(`-${gateway.pid}-v8.log`)) renameSync(join(ROOT, f), join(out, f));
const gcLine = annotated.split('\n').find((l) => /Heap::CollectGarbage\(/.test(l));
const gc = gcLine ? Number(gcLine.trim().split(/\s+/)[0].replace(/,/g, '')) : 0;
const k = (n) => (n / measured / 1000).toFixed(1);
console.log(
  JSON.stringify({
    store,
    path,
    connections,
    warmup,
    measured,
    mainFile: main.f,
    mainK: Number(k(main.ir)),
    gcK: Number(k(gc)),
    mutatorK: Number(k(main.ir - gc)),
    scriptCallsPerRequest: Number((calls / measured).toFixed(4)),
  }),
);
