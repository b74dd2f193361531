// `npm run bench`: tollgate against bare forwarding and the peers a Node user would pick, on one
// local upstream, measured side by side in one run. With taskset and ≥ 2 CPUs, the server under
// test runs alone on one CPU and everything else on another (bench/lib/pinning.js); each server's
// CPU time per request is read from /proc beside its req/s. Load: wrk -t1 (autocannon if wrk is
// missing). Everything binds to 127.0.0.1 and stops by itself.
//
// Settings: BENCH_ROUNDS (3), BENCH_DURATION (s, 4), BENCH_WARMUP (s, 1), BENCH_CONNECTIONS (32),
// BENCH_REPEAT (1: the rounds are run that many times over, and each ratio is given as the median
// and spread of the repeats'), BENCH_ONLY (comma-separated scenario ids), BENCH_PROFILE (scenario ids profiled in one extra
// run each, default tollgate-memory,tollgate-redis; 0 for none), BENCH_PIN=0 (no pinning),
// BENCH_LOADGEN (wrk or autocannon; default wrk when installed). BENCH_COMPARE=<checkout>: also runs
// every selected tollgate scenario with that checkout's dist/cli.js ("<id>@base"), next to this
// build's in every round, and prints their CPU per request paired by round; such a run writes no
// report (bench/results.md is for whole runs).
import { execFileSync } from 'node:child_process';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, release } from 'node:os';
import { join } from 'node:path';
import { clearTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  available as cpuTimeAvailable,
  clockTicks,
  cpuBetween,
  cpuLoadBetween,
  processTree,
  sampleCpus,
  sampleTree,
} from './lib/cpu-time.js';
import { autocannonLoad, h2loadLoad, stopLoad, wrkLoad } from './lib/load.js';
import { affinityOf, pinProcess, planPinning } from './lib/pinning.js';
import {
  ROOT,
  describeExit,
  freePort,
  httpRequest,
  onPath,
  startNode,
  stop,
  stopAll,
  waitForHttp,
  waitForRedis,
} from './lib/processes.js';
import { loopBetween, sampleLoop } from './lib/loop-stats.js';
import { summariseProfile } from './lib/profile-summary.js';
import { startRedisCluster } from './lib/redis-cluster.js';
import { redisBetween, redisSnapshot, shardSnapshots, shardsBetween } from './lib/redis-stats.js';
import { printReport, repeatSpreads, summarise, writeReports } from './lib/report.js';
import { DEFAULT_PROFILED, SCENARIOS } from './lib/scenarios.js';

const UPSTREAM_BODY = '{"ok":true,"service":"bench-upstream"}';
const REQUEST_BODY = '{"event":"bench"}';
const PROFILE_DIR = join('bench', 'profiles');
const PROFILE_INTERVAL_US = 250;

function envInteger(name, fallback, min) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min)
    throw new Error(`${name} must be a whole number ≥ ${min}, got "${raw}"`);
  return n;
}

function envList(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === '0') return [];
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function readSettings() {
  return {
    rounds: envInteger('BENCH_ROUNDS', 3, 1),
    repeat: envInteger('BENCH_REPEAT', 1, 1),
    duration: envInteger('BENCH_DURATION', 4, 1), // wrk takes whole seconds
    warmup: envInteger('BENCH_WARMUP', 1, 0),
    connections: envInteger('BENCH_CONNECTIONS', 32, 1),
    only: envList('BENCH_ONLY', []),
    profile: envList('BENCH_PROFILE', DEFAULT_PROFILED),
    compare: process.env.BENCH_COMPARE || undefined,
  };
}

let settings;
try {
  settings = readSettings();
} catch (err) {
  console.error(`[bench] ${err.message}`);
  process.exit(2);
}

function log(message) {
  console.log(`[bench] ${message}`);
}

/** wrk if installed (or asked for), else autocannon, with a line saying which and why. */
function chooseLoadGenerator() {
  const asked = process.env.BENCH_LOADGEN;
  if (asked && asked !== 'wrk' && asked !== 'autocannon') {
    throw new Error(`BENCH_LOADGEN must be wrk or autocannon, got "${asked}"`);
  }
  if (asked !== 'autocannon' && onPath('wrk')) {
    let version = 'wrk';
    try {
      execFileSync('wrk', ['--version'], { encoding: 'utf8', stdio: 'pipe' });
    } catch (err) {
      version = String(err.stdout ?? '').split('\n')[0] || version; // wrk --version exits 1
    }
    return { name: 'wrk', version: version.replace(/ Copyright.*/, '').trim(), run: wrkLoad };
  }
  if (asked === 'wrk')
    throw new Error('BENCH_LOADGEN=wrk but wrk is not installed (Debian: apt-get install wrk)');
  const why =
    asked === 'autocannon'
      ? 'BENCH_LOADGEN=autocannon'
      : 'wrk is not installed (Debian: apt-get install wrk), so the bench falls back to autocannon';
  return {
    name: 'autocannon',
    version: 'autocannon (in the bench process)',
    note: `${why}: it runs inside the bench process and costs more CPU per request than wrk, so its figures are not comparable with a wrk run's.`,
    run: autocannonLoad,
  };
}

const requestHeaders = { 'content-type': 'application/json' };

/** Sends the scenario's request once and checks the answer is what the load should get. */
async function probe(scenario, port) {
  const send = () =>
    httpRequest(port, { method: 'POST', path: scenario.path, headers: requestHeaders, body: REQUEST_BODY });
  if (scenario.expect === 429) {
    // The limit is 1 an hour and the store was just flushed: the first request is allowed.
    const first = await send();
    if (first.status !== 200) {
      throw new Error(`${scenario.id}: the first request should pass, got ${first.status}: ${first.body}`);
    }
  }
  const res = await send();
  const problems = [];
  if (res.status !== scenario.expect) problems.push(`status ${res.status}, expected ${scenario.expect}`);
  if (scenario.expect === 200 && res.body !== UPSTREAM_BODY)
    problems.push(`body ${JSON.stringify(res.body)}`);
  if (scenario.limit && res.headers['x-ratelimit-limit'] !== scenario.limit) {
    problems.push(`X-RateLimit-Limit ${res.headers['x-ratelimit-limit']}, expected ${scenario.limit}`);
  }
  if (problems.length > 0) {
    throw new Error(`probe of ${scenario.id} (POST ${scenario.path}) failed: ${problems.join('; ')}`);
  }
}

/** Sum of the Redis counters under a prefix: how many requests the limiter counted. */
async function counted(redis, prefix) {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length === 0) return 0;
  const values = await redis.mget(keys);
  return values.reduce((sum, v) => sum + Number(v ?? 0), 0);
}

/** tollgate_requests_total of one limiter, by decision, from the admin listener. */
async function decisions(adminPort, limiter) {
  const res = await httpRequest(adminPort, { path: '/metrics', timeoutMs: 5000 });
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}: ${res.body.slice(0, 200)}`);
  const out = {};
  const re = /^tollgate_requests_total\{([^}]*)\} (\d+)/gm;
  for (const m of res.body.matchAll(re)) {
    const labels = Object.fromEntries([...m[1].matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (labels.limiter === limiter) out[labels.decision] = (out[labels.decision] ?? 0) + Number(m[2]);
  }
  return out;
}

function diffCounts(before, after) {
  const out = {};
  for (const k of Object.keys(after))
    if (after[k] - (before[k] ?? 0) !== 0) out[k] = after[k] - (before[k] ?? 0);
  return out;
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

/** Waits until a TLS listener completes a handshake. */
async function waitForTls(proc, port, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!proc.alive) throw new Error(describeExit(proc));
    const ok = await new Promise((resolve) => {
      const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false });
      socket.once('secureConnect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${proc.name}: no TLS handshake on port ${port}`);
    await sleep(50);
  }
}

/** A self-signed certificate for the TLS scenarios (openssl), in a temporary folder. */
function benchCertificate() {
  const dir = join(tmpdir(), `tollgate-bench-tls-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
    ],
    { stdio: 'pipe' },
  );
  return { cert, key };
}

/** Waits until a cluster primary has forked all its workers (they inherit its CPU). */
async function waitForWorkers(proc, workers, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (processTree(proc.child.pid).length < workers + 1) {
    if (!proc.alive) throw new Error(describeExit(proc));
    if (Date.now() > deadline) throw new Error(`${proc.name}: ${workers} workers did not start`);
    await sleep(50);
  }
}

/** Pins every thread of every process of the server's tree, and returns what taskset then reports. */
function pinTree(pid, cpu) {
  const tree = processTree(pid);
  for (const p of tree) pinProcess(p, cpu);
  return [...new Set(tree.map((p) => affinityOf(p)))].join(' ');
}

/**
 * One run of a scenario: start its server (pinned), probe it, warm it up, then measure one window
 * with CPU, Redis and limiter snapshots right before and after it.
 */
async function runScenario(scenario, ctx, { profileName } = {}) {
  const { upstreamPort, redis, redisUrl, pinning, loadgen, tls, cluster } = ctx;
  if (redis) await redis.flushall();
  const shards = scenario.redisCluster ? cluster.nodes : undefined;
  if (shards) for (const n of shards) await n.client.flushall();
  const cpu = pinning.pinned ? pinning.serverCpu : undefined;
  const port = await freePort();
  // A script that runs tollgate too (scenario.admin) gets an admin port, for its decisions.
  const adminPort = scenario.kind === 'tollgate' || scenario.admin ? await freePort() : undefined;
  const childEnv = { PORT: String(port), UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}` };
  if (adminPort !== undefined) childEnv.ADMIN_PORT = String(adminPort);
  if (scenario.redis) childEnv.REDIS_URL = redisUrl;
  if (shards) childEnv.REDIS_CLUSTER_NODES = cluster.seeds;
  if (scenario.loadgen) Object.assign(childEnv, { TLS_CERT: tls.cert, TLS_KEY: tls.key });
  const logs = new Map(); // "level msg" -> count
  let proc;
  if (scenario.kind === 'tollgate') {
    Object.assign(childEnv, { LOG_LEVEL: 'warn' }, scenario.env);
    const nodeArgs = profileName
      ? [
          '--cpu-prof',
          '--cpu-prof-dir',
          PROFILE_DIR,
          '--cpu-prof-name',
          profileName,
          '--cpu-prof-interval',
          String(PROFILE_INTERVAL_US),
        ]
      : [];
    proc = startNode(scenario.id, scenario.cli ?? 'dist/cli.js', {
      nodeArgs,
      args: ['start', '--config', scenario.config ?? 'bench/gateway.yaml'],
      env: childEnv,
      cpu,
      onJson: (line) => {
        if (typeof line.level !== 'number' || line.level < 40) return;
        const key = `${line.level >= 50 ? 'error' : 'warn'} "${line.msg}"`;
        logs.set(key, (logs.get(key) ?? 0) + 1);
      },
    });
  } else {
    proc = startNode(scenario.id, scenario.script, {
      env: { ...childEnv, ...(scenario.admin ? { LOG_LEVEL: 'warn' } : {}), ...scenario.env },
      cpu,
    });
  }
  const pid = proc.child.pid;
  try {
    if (scenario.loadgen) await waitForTls(proc, port);
    else await waitForHttp(proc, port);
    if (scenario.workers) await waitForWorkers(proc, scenario.workers);
    const affinity = cpu === undefined ? undefined : pinTree(pid, cpu);
    // Over TLS the load's own status counts are the check (every response must be a 200).
    if (!scenario.loadgen) await probe(scenario, port);
    const run = scenario.loadgen ? (o) => h2loadLoad({ ...o, ...scenario.loadgen }) : loadgen.run;
    const load = (seconds) =>
      run({
        port,
        path: scenario.path,
        seconds,
        connections: settings.connections,
        body: REQUEST_BODY,
      });
    if (settings.warmup > 0) await load(settings.warmup);

    const watchRedis = scenario.redis && redis;
    const countedBefore = scenario.counterPrefix ? await counted(redis, scenario.counterPrefix) : undefined;
    const decisionsBefore = scenario.decisions ? await decisions(adminPort, scenario.decisions) : undefined;
    const redisBefore = watchRedis ? await redisSnapshot(redis) : undefined;
    const shardsBefore = shards ? await shardSnapshots(shards) : undefined;
    const cpuBefore = cpuTimeAvailable ? sampleTree(pid) : undefined;
    const loopBefore = sampleLoop(pid);
    const cpusBefore = sampleCpus();
    const fromUs = nowUs();
    const result = await load(settings.duration);
    const toUs = nowUs();
    const cpusAfter = sampleCpus();
    const loopAfter = sampleLoop(pid);
    const cpuAfter = cpuTimeAvailable ? sampleTree(pid) : undefined;
    const redisAfter = watchRedis ? await redisSnapshot(redis) : undefined;
    const shardsAfter = shards ? await shardSnapshots(shards) : undefined;
    const decisionsAfter = scenario.decisions ? await decisions(adminPort, scenario.decisions) : undefined;
    const countedAfter = scenario.counterPrefix ? await counted(redis, scenario.counterPrefix) : undefined;
    if (!proc.alive) throw new Error(`${scenario.id} died under load: ${describeExit(proc)}`);

    const unexpected =
      result.statusCodes !== undefined
        ? result.responses - (result.statusCodes[scenario.expect] ?? 0)
        : scenario.expect === 200
          ? result.non2xx
          : result.responses - result.non2xx; // wrk tells only 2xx/3xx from the rest
    const cpuTime = cpuBefore && cpuAfter ? cpuBetween(cpuBefore, cpuAfter) : undefined;
    const windowUs = toUs - fromUs;
    const byShard = shards ? shardsBetween(shards, shardsBefore, shardsAfter, result.responses) : undefined;
    const serverCpuLoad = pinning.pinned
      ? cpuLoadBetween(cpusBefore, cpusAfter, pinning.serverCpu)
      : undefined;
    const sharedCpuLoad = pinning.pinned ? cpuLoadBetween(cpusBefore, cpusAfter, pinning.restCpu) : undefined;
    return {
      proc,
      fromUs,
      toUs,
      run: {
        rps: result.rps,
        responses: result.responses,
        durationSec: result.durationSec,
        p50Ms: result.p50Ms,
        p99Ms: result.p99Ms,
        maxMs: result.maxMs,
        errors: result.errors,
        unexpected,
        statusCodes: result.statusCodes,
        cpuUs: cpuTime?.cpuUs,
        cpuPerReq: cpuTime ? cpuTime.cpuUs / result.responses : undefined,
        // The server's read/write calls and main-thread sleeps per request, and the load
        // generator's own CPU per request (h2load): what moves CPU µs per request between rounds.
        loop: loopBetween(loopBefore, loopAfter, result.responses),
        clientCpuPerReq: result.clientCpuUs !== undefined ? result.clientCpuUs / result.responses : undefined,
        // Share of one CPU the server's processes used during the window: near 100% when pinned
        // means its CPU was what bounded the throughput.
        cpuBusy: cpuTime ? cpuTime.cpuUs / windowUs : undefined,
        // The pinned CPUs as a whole (every process on them, not only the bench's): how much of
        // the server's CPU others took, and whether the shared CPU was the bottleneck.
        othersOnServerCpu:
          serverCpuLoad && cpuTime ? Math.max(0, serverCpuLoad.busy - cpuTime.cpuUs / windowUs) : undefined,
        sharedCpuBusy: sharedCpuLoad?.busy,
        steal: serverCpuLoad ? Math.max(serverCpuLoad.steal, sharedCpuLoad?.steal ?? 0) : undefined,
        processes: cpuTime?.perProcess.map((p) => ({ name: p.name, cpuPerReq: p.cpuUs / result.responses })),
        exitedDuringWindow: cpuTime?.exited,
        affinity,
        redis:
          redisBefore && redisAfter
            ? (({ scriptCalls, otherCalls, commands, cpuUs }) => ({
                scriptCalls,
                otherCalls,
                commands,
                scriptCallsPerResponse: scriptCalls / result.responses,
                cpuPerReq: cpuUs / result.responses,
              }))(redisBetween(redisBefore, redisAfter))
            : byShard?.total,
        redisShards: byShard?.shards,
        counted: countedBefore !== undefined ? countedAfter - countedBefore : undefined,
        decisions: decisionsBefore ? diffCounts(decisionsBefore, decisionsAfter) : undefined,
        logs: Object.fromEntries(logs),
      },
    };
  } catch (err) {
    await stop(proc);
    throw err;
  }
}

/** One extra run under --cpu-prof; its steps are an estimate, its req/s are not reported. */
async function profileScenario(scenario, ctx) {
  const name = `${scenario.id}.cpuprofile`;
  const file = join(ROOT, PROFILE_DIR, name);
  rmSync(file, { force: true });
  const { proc, fromUs, toUs, run } = await runScenario(scenario, ctx, { profileName: name });
  await stop(proc, 15_000); // the profile is written as the process exits
  if (!existsSync(file)) throw new Error(`${scenario.id}: no profile was written to ${file}`);
  const summary = summariseProfile(JSON.parse(readFileSync(file, 'utf8')), fromUs, toUs);
  const perReq = (us) => us / run.responses;
  return {
    id: scenario.id,
    file: join(PROFILE_DIR, name),
    responses: run.responses,
    rps: run.rps,
    statCpuPerReq: run.cpuPerReq,
    profiledPerReq: perReq(summary.busyUs),
    windowed: summary.windowed,
    samples: summary.samples,
    intervalUs: PROFILE_INTERVAL_US,
    steps: summary.steps.map((s) => ({
      step: s.step,
      usPerReq: perReq(s.us),
      beneathPerReq: perReq(s.beneathUs),
      share: s.us / summary.busyUs,
    })),
  };
}

function describeRun(r) {
  const parts = [
    `${Math.round(r.rps)} req/s`,
    r.cpuPerReq !== undefined
      ? `${r.cpuPerReq.toFixed(1)} CPU µs/req (CPU ${Math.round(r.cpuBusy * 100)}% busy)`
      : '',
    r.othersOnServerCpu !== undefined
      ? `others took ${Math.round(r.othersOnServerCpu * 100)}% of its CPU, shared CPU ${Math.round(r.sharedCpuBusy * 100)}% busy`
      : '',
    r.loop
      ? `${r.loop.readsPerReq.toFixed(2)} reads, ${r.loop.writesPerReq.toFixed(2)} writes, ` +
        `${r.loop.sleepsPerReq.toFixed(2)} sleeps/req`
      : '',
    r.clientCpuPerReq !== undefined ? `h2load ${r.clientCpuPerReq.toFixed(1)} CPU µs/req` : '',
    `p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms`,
    `${r.unexpected} unexpected, ${r.errors} errors`,
    r.redis ? `${r.redis.scriptCallsPerResponse.toFixed(3)} script calls/response` : '',
    r.redis ? `Redis ${r.redis.cpuPerReq.toFixed(2)} CPU µs/response` : '',
    r.redisShards
      ? `per master: ${r.redisShards
          .map((s) => `:${s.port} ${s.scriptCallsPerResponse.toFixed(3)} calls, ${s.cpuPerReq.toFixed(2)} µs`)
          .join('; ')}`
      : '',
    r.counted !== undefined ? `${r.counted} counted in Redis for ${r.responses} responses` : '',
    r.decisions ? `decisions ${JSON.stringify(r.decisions)}` : '',
    Object.keys(r.logs).length ? `logged ${JSON.stringify(r.logs)}` : '',
  ];
  return parts.filter(Boolean).join(', ');
}

async function main() {
  const loadBefore = loadavg();
  if (!existsSync(join(ROOT, 'dist', 'cli.js')))
    throw new Error('dist/cli.js is missing: run `npm run build`');
  const known = settings.compare ? withComparisons(SCENARIOS, settings.compare) : SCENARIOS;
  const unknown = [...settings.only, ...settings.profile].filter(
    (id) => !known.some((s) => s.id === id || s.id === `${id}@base`),
  );
  if (unknown.length)
    throw new Error(`unknown scenario(s) ${unknown.join(', ')}: ${SCENARIOS.map((s) => s.id)}`);
  const wanted = settings.only.length
    ? known.filter((s) => settings.only.includes(s.id) || settings.only.includes(s.twinOf))
    : known;
  const scenarios = wanted.filter((s) => {
    if (!s.requires || onPath(s.requires)) return true;
    const pkg = s.requires === 'h2load' ? 'nghttp2-client' : 'nginx-light';
    log(`${s.id}: skipped, ${s.requires} is not installed (Debian: apt-get install ${pkg})`);
    return false;
  });
  if (scenarios.length === 0) throw new Error('no scenario to run');
  const profiled = scenarios.filter((s) => settings.profile.includes(s.id));

  const loadgen = chooseLoadGenerator();
  if (loadgen.note) log(`NOTE: ${loadgen.note}`);
  const pinning = planPinning(loadgen.name);
  if (pinning.pinned) pinProcess(process.pid, pinning.restCpu); // wrk, upstream and Redis inherit it
  log(pinning.statement);
  if (!cpuTimeAvailable) log('no /proc here: CPU µs per request cannot be measured');
  if (profiled.length) mkdirSync(join(ROOT, PROFILE_DIR), { recursive: true });
  log(
    `${scenarios.length} scenarios × ${settings.rounds} round(s), ${loadgen.name} with ` +
      `${settings.connections} connections: ${settings.warmup} s warm-up + ${settings.duration} s measured ` +
      `each, POST with a ${REQUEST_BODY.length}-byte JSON body` +
      (profiled.length ? `; then one --cpu-prof run of ${profiled.map((s) => s.id).join(', ')}` : ''),
  );

  const redisPort = await freePort();
  const redisProc = startNode('redis-server', 'bench/servers/redis.js', { env: { PORT: String(redisPort) } });
  const redis = await waitForRedis(redisProc, redisPort);
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  const redisVersion = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1];
  log(`redis-server ${redisVersion} on port ${redisPort} (no persistence)`);

  const upstreamPort = await freePort();
  const upstream = startNode('upstream', 'bench/servers/upstream.js', {
    env: { PORT: String(upstreamPort) },
  });
  await waitForHttp(upstream, upstreamPort);
  log(`upstream (node:http, 200 + ${UPSTREAM_BODY.length}-byte JSON) on port ${upstreamPort}`);

  const tls = scenarios.some((s) => s.loadgen) ? benchCertificate() : undefined;
  const cluster = scenarios.some((s) => s.redisCluster) ? await startRedisCluster() : undefined;
  if (cluster) log(`Redis Cluster of 3 masters (no replicas) on ${cluster.seeds}`);
  const ctx = { upstreamPort, redis, redisUrl, pinning, loadgen, tls, cluster };
  const runs = new Map(scenarios.map((s) => [s.id, []]));
  const repeatRuns = [];
  const profiles = [];
  try {
    for (let repeat = 1; repeat <= settings.repeat; repeat++) {
      const thisRepeat = new Map(scenarios.map((s) => [s.id, []]));
      repeatRuns.push(thisRepeat);
      const of = settings.repeat > 1 ? ` (repeat ${repeat}/${settings.repeat})` : '';
      for (let round = 1; round <= settings.rounds; round++) {
        // A twin and its scenario swap places every other round, so neither always runs first.
        for (const scenario of round % 2 === 0 ? swapTwins(scenarios) : scenarios) {
          if (!upstream.alive) throw new Error(describeExit(upstream));
          const { proc, run } = await runScenario(scenario, ctx);
          await stop(proc);
          runs.get(scenario.id).push(run);
          thisRepeat.get(scenario.id).push(run);
          log(`round ${round}/${settings.rounds}${of} ${scenario.id}: ${describeRun(run)}`);
          await sleep(200); // let the last run's sockets close
        }
      }
    }
    for (const scenario of profiled) {
      const p = await profileScenario(scenario, ctx);
      profiles.push(p);
      log(
        `profile of ${scenario.id}: ${p.file}, ${p.profiledPerReq.toFixed(1)} µs/req of JS-thread samples ` +
          `(/proc: ${p.statCpuPerReq?.toFixed(1)} µs/req under the profiler)`,
      );
    }
  } finally {
    redis.disconnect();
    for (const n of cluster?.nodes ?? []) n.client.disconnect();
    await stopAll();
  }

  const cpu = cpus();
  const meta = {
    date: new Date().toISOString(),
    rounds: settings.rounds,
    repeat: settings.repeat,
    duration: settings.duration,
    warmup: settings.warmup,
    connections: settings.connections,
    loadGenerator: loadgen.version,
    loadGeneratorNote: loadgen.note,
    threads: loadgen.name === 'wrk' ? 1 : undefined,
    pinning,
    clockTicks,
    node: process.version,
    redis: redisVersion,
    machine: `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, Linux ${release()}`,
    loadBefore: loadBefore.map((n) => n.toFixed(2)).join(' '),
    loadAfter: loadavg()
      .map((n) => n.toFixed(2))
      .join(' '),
  };
  const report = summarise(scenarios, runs, profiles, meta);
  if (settings.repeat > 1) report.spreads = repeatSpreads(scenarios, repeatRuns, meta);
  printReport(report);
  if (settings.compare) {
    printPairs(pairedRounds(scenarios, runs), settings.compare);
    log('a comparison run: bench/results.md and bench/results.json left as they were');
    return;
  }
  await writeReports(report);
  log('wrote bench/results.md and bench/results.json');
}

/** Each tollgate scenario preceded by its twin run from another checkout's build ("<id>@base"). */
function withComparisons(scenarios, checkout) {
  const cli = join(checkout, 'dist', 'cli.js');
  if (!existsSync(cli)) throw new Error(`BENCH_COMPARE: ${cli} is missing (build that checkout first)`);
  return scenarios.flatMap((s) =>
    s.kind === 'tollgate'
      ? [{ ...s, id: `${s.id}@base`, twinOf: s.id, label: `${s.label} [${checkout}]`, cli }, s]
      : [s],
  );
}

function swapTwins(scenarios) {
  const out = [...scenarios];
  for (let i = 0; i + 1 < out.length; i++) {
    if (out[i].twinOf && out[i].twinOf === out[i + 1].id) {
      const twin = out[i];
      out[i] = out[i + 1];
      out[i + 1] = twin;
      i++;
    }
  }
  return out;
}

/** Per round: the twin's CPU µs per request over this build's (above 1: this build is cheaper). */
function pairedRounds(scenarios, runs) {
  return scenarios
    .filter((s) => s.twinOf && runs.has(s.twinOf))
    .map((s) => {
      const base = runs.get(s.id);
      const ours = runs.get(s.twinOf);
      const rounds = base.map((b, i) => ({ base: b.cpuPerReq, ours: ours[i]?.cpuPerReq }));
      const ratios = rounds.map((r) => r.base / r.ours).sort((a, b) => a - b);
      return { id: s.twinOf, rounds, median: ratios[Math.floor((ratios.length - 1) / 2)] };
    });
}

function printPairs(pairs, checkout) {
  console.log(`paired CPU µs per request, ${checkout} → this build, round by round:`);
  for (const p of pairs) {
    const rounds = p.rounds.map((r) => `${r.base?.toFixed(1)} → ${r.ours?.toFixed(1)}`).join('; ');
    console.log(`  ${p.id}: ${rounds}; ratio (median of rounds) ${p.median?.toFixed(3)}×`);
  }
}

// Everything stops by itself: the whole run has a time budget.
const runSeconds = settings.warmup + settings.duration + 30;
const scenarioCount = SCENARIOS.length * (settings.compare ? 2 : 1);
const budgetMs =
  ((settings.repeat * settings.rounds * scenarioCount + settings.profile.length) * runSeconds + 60) * 1000;
const watchdog = setTimeout(() => {
  console.error(`[bench] still running after ${budgetMs / 1000} s: giving up`);
  stopLoad();
  stopAll().finally(() => process.exit(1));
}, budgetMs);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`[bench] ${signal}: stopping the servers`);
    stopLoad();
    stopAll().finally(() => process.exit(130));
  });
}

main().then(
  () => clearTimeout(watchdog),
  (err) => {
    clearTimeout(watchdog);
    console.error(`[bench] aborted: ${err.message}`);
    stopLoad();
    stopAll().finally(() => process.exit(1));
  },
);
