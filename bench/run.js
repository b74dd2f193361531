// `npm run bench`: tollgate against bare forwarding and a common Node stack, on one local upstream.
// Every server runs in its own process; autocannon runs here. Everything binds to 127.0.0.1 and
// stops by itself. Settings: BENCH_DURATION (s, default 8), BENCH_WARMUP (s, default 2),
// BENCH_CONNECTIONS (default 100), BENCH_ROUNDS (default 1: more runs every scenario again and keeps
// each one's median), BENCH_ONLY (comma-separated scenario ids), BENCH_CPU_PROF=1 (profile tollgate).
import { existsSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { clearTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import {
  ROOT,
  describeExit,
  freePort,
  httpRequest,
  startNode,
  stop,
  stopAll,
  waitForHttp,
  waitForRedis,
} from './lib/processes.js';
import { checkTargets, printReport, writeReports } from './lib/report.js';

const UPSTREAM_BODY = '{"ok":true,"service":"bench-upstream"}';
const REQUEST_BODY = '{"event":"bench"}';
const HUGE_LIMIT = '1000000000';
const PROFILE_DIR = join('bench', 'profiles');

function envNumber(name, fallback, min) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number ≥ ${min}, got "${raw}"`);
  return n;
}

const settings = {
  duration: envNumber('BENCH_DURATION', 8, 1),
  warmup: envNumber('BENCH_WARMUP', 2, 0),
  connections: Math.round(envNumber('BENCH_CONNECTIONS', 100, 1)),
  rounds: Math.round(envNumber('BENCH_ROUNDS', 1, 1)),
  cpuProf: process.env.BENCH_CPU_PROF === '1',
  only: (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
};

/**
 * kind: where the load goes. 'upstream' (no server of its own), 'script' (a bench server),
 * 'tollgate' (dist/cli.js with bench/gateway.yaml). redis: the server gets REDIS_URL.
 * expect: the status every response should have. limit: the X-RateLimit-Limit the probe must see.
 */
const SCENARIOS = [
  { id: 'direct', label: 'direct upstream', kind: 'upstream', path: '/bench/forward', expect: 200 },
  {
    id: 'undici',
    label: 'bare undici forwarding (Pool + dispatch, as tollgate)',
    kind: 'script',
    script: 'bench/servers/undici-proxy.js',
    env: { UNDICI_MODE: 'dispatch' },
    path: '/bench/forward',
    expect: 200,
  },
  {
    id: 'undici-stream',
    label: 'bare undici forwarding (Pool + stream)',
    kind: 'script',
    script: 'bench/servers/undici-proxy.js',
    env: { UNDICI_MODE: 'stream' },
    path: '/bench/forward',
    expect: 200,
  },
  {
    id: 'http-proxy',
    label: 'bare http-proxy 1.18 forwarding',
    kind: 'script',
    script: 'bench/servers/http-proxy.js',
    path: '/bench/forward',
    expect: 200,
  },
  {
    id: 'tollgate-memory',
    label: 'tollgate, memory store',
    kind: 'tollgate',
    path: '/bench/forward',
    expect: 200,
    limit: HUGE_LIMIT,
  },
  {
    id: 'tollgate-redis',
    label: 'tollgate, Redis store',
    kind: 'tollgate',
    redis: true,
    path: '/bench/forward',
    expect: 200,
    limit: HUGE_LIMIT,
    counterPrefix: 'tg:',
  },
  {
    id: 'tollgate-redis-w2',
    label: 'tollgate, Redis store, workers: 2',
    kind: 'tollgate',
    redis: true,
    env: { WORKERS: '2' },
    path: '/bench/forward',
    expect: 200,
    limit: HUGE_LIMIT,
    counterPrefix: 'tg:',
  },
  {
    id: 'tollgate-429',
    label: 'tollgate, 429 for a flooding key (Redis, over-limit cache)',
    kind: 'tollgate',
    redis: true,
    path: '/bench/flood',
    expect: 429,
    limit: '1',
  },
  {
    id: 'tollgate-429-nocache',
    label: 'tollgate, 429 for a flooding key (Redis, overLimitCache: false)',
    kind: 'tollgate',
    redis: true,
    path: '/bench/flood-nocache',
    expect: 429,
    limit: '1',
  },
  {
    id: 'nginx',
    label: 'nginx proxy_pass (Debian nginx, 2 workers, no limiting)',
    kind: 'script',
    script: 'bench/servers/nginx.js',
    requires: 'nginx',
    path: '/bench/forward',
    expect: 200,
  },
  {
    id: 'express',
    label: 'express 5 + express-rate-limit + rate-limit-redis + http-proxy-middleware',
    kind: 'script',
    script: 'bench/servers/express-peer.js',
    redis: true,
    path: '/bench/forward',
    expect: 200,
    limit: HUGE_LIMIT,
    counterPrefix: 'rl:',
  },
];

const requestHeaders = { 'content-type': 'application/json' };

function log(message) {
  console.log(`[bench] ${message}`);
}

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
  return scenario.expect === 429 ? 2 : 1;
}

function load(port, path, duration) {
  return autocannon({
    url: `http://127.0.0.1:${port}${path}`,
    method: 'POST',
    headers: requestHeaders,
    body: REQUEST_BODY,
    connections: settings.connections,
    pipelining: 1,
    duration,
    timeout: 10,
  });
}

/** Sum of the Redis counters under a prefix: how many requests the limiter counted. */
async function counted(redis, prefix) {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length === 0) return 0;
  const values = await redis.mget(keys);
  return values.reduce((sum, v) => sum + Number(v ?? 0), 0);
}

async function runScenario(scenario, env) {
  const { upstreamPort, redis, redisUrl } = env;
  if (redis) await redis.flushall();
  let proc;
  let port = upstreamPort;
  const logs = new Map(); // "level msg" -> { count, example }
  if (scenario.kind !== 'upstream') {
    port = await freePort();
    const childEnv = { PORT: String(port), UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}` };
    if (scenario.redis) childEnv.REDIS_URL = redisUrl;
    if (scenario.kind === 'tollgate') {
      childEnv.LOG_LEVEL = 'warn';
      Object.assign(childEnv, scenario.env);
      const nodeArgs = settings.cpuProf
        ? ['--cpu-prof', '--cpu-prof-dir', PROFILE_DIR, '--cpu-prof-name', `${scenario.id}.cpuprofile`]
        : [];
      proc = startNode(scenario.id, 'dist/cli.js', {
        nodeArgs,
        args: ['start', '--config', 'bench/gateway.yaml'],
        env: childEnv,
        onJson: (line) => {
          if (typeof line.level !== 'number' || line.level < 40) return;
          const key = `${line.level >= 50 ? 'error' : 'warn'} ${line.msg}`;
          const entry = logs.get(key) ?? { count: 0, example: line };
          entry.count++;
          logs.set(key, entry);
        },
      });
    } else {
      proc = startNode(scenario.id, scenario.script, { env: { ...childEnv, ...scenario.env } });
    }
    await waitForHttp(proc, port);
  }
  try {
    const probes = await probe(scenario, port);
    if (settings.warmup > 0) await load(port, scenario.path, settings.warmup);
    const warm = await counterSnapshot(scenario, redis);
    const result = await load(port, scenario.path, settings.duration);
    const after = await counterSnapshot(scenario, redis);
    if (proc && !proc.alive) throw new Error(`${scenario.id} died under load: ${describeExit(proc)}`);
    const expected = result.statusCodeStats[scenario.expect]?.count ?? 0;
    const responses = Object.values(result.statusCodeStats).reduce((n, s) => n + s.count, 0);
    return {
      id: scenario.id,
      label: scenario.label,
      expect: scenario.expect,
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      latencyMax: result.latency.max,
      responses,
      expected,
      unexpected: responses - expected,
      statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([k, v]) => [k, v.count])),
      errors: result.errors,
      timeouts: result.timeouts,
      resets: result.resets,
      durationSec: result.duration,
      probes,
      // Counter increase during the measured run, against the responses that run got.
      counted: after !== undefined && warm !== undefined ? after - warm : undefined,
      logs: [...logs].map(([key, { count, example }]) => ({ key, count, example })),
    };
  } finally {
    if (proc) await stop(proc);
  }
}

function counterSnapshot(scenario, redis) {
  return scenario.counterPrefix && redis ? counted(redis, scenario.counterPrefix) : undefined;
}

/** Of several runs of one scenario, the one with the median throughput. */
function median(runs) {
  const sorted = [...runs].sort((a, b) => a.rps - b.rps);
  return { ...sorted[Math.floor((sorted.length - 1) / 2)], rounds: runs.map((r) => r.rps) };
}

/** Whether a command is on the PATH. */
function onPath(command) {
  return (process.env.PATH ?? '').split(':').some((d) => d && existsSync(join(d, command)));
}

async function main() {
  const load = loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
  if (!existsSync(join(ROOT, 'dist', 'cli.js')))
    throw new Error('dist/cli.js is missing: run `npm run build`');
  const wanted = settings.only.length ? SCENARIOS.filter((s) => settings.only.includes(s.id)) : SCENARIOS;
  const scenarios = wanted.filter((s) => {
    if (!s.requires || onPath(s.requires)) return true;
    log(`${s.id}: skipped, ${s.requires} is not installed (Debian: apt-get install nginx-light)`);
    return false;
  });
  if (scenarios.length === 0)
    throw new Error(`BENCH_ONLY matches no scenario (${SCENARIOS.map((s) => s.id)})`);
  if (settings.cpuProf) mkdirSync(join(ROOT, PROFILE_DIR), { recursive: true });

  log(
    `${scenarios.length} scenarios × ${settings.rounds} round(s): ${settings.connections} connections, ` +
      `${settings.warmup} s warm-up + ${settings.duration} s measured each, POST with a ${REQUEST_BODY.length}-byte JSON body`,
  );
  log('tollgate runs with LOG_LEVEL=warn (no per-request access log); every server has its own process');
  if (settings.cpuProf)
    log(`tollgate runs with --cpu-prof: profiles go to ${PROFILE_DIR}/<scenario>.cpuprofile`);

  const redisPort = await freePort();
  const redisProc = startNode('redis-server', 'bench/servers/redis.js', { env: { PORT: String(redisPort) } });
  const redis = await waitForRedis(redisProc, redisPort);
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  log(`redis-server on port ${redisPort} (no persistence)`);

  const upstreamPort = await freePort();
  const upstream = startNode('upstream', 'bench/servers/upstream.js', {
    env: { PORT: String(upstreamPort) },
  });
  await waitForHttp(upstream, upstreamPort);
  log(`upstream (node:http, 200 + ${UPSTREAM_BODY.length}-byte JSON) on port ${upstreamPort}`);

  const runs = new Map(scenarios.map((s) => [s.id, []]));
  try {
    for (let round = 1; round <= settings.rounds; round++) {
      for (const scenario of scenarios) {
        if (!upstream.alive) throw new Error(describeExit(upstream));
        log(`${settings.rounds > 1 ? `round ${round}: ` : ''}${scenario.id}: ${scenario.label}`);
        const r = await runScenario(scenario, { upstreamPort, redis, redisUrl });
        runs.get(scenario.id).push(r);
        log(
          `  ${Math.round(r.rps)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ` +
            `${r.unexpected} unexpected, ${r.errors} errors` +
            (r.counted !== undefined ? `, ${r.counted} counted in Redis for ${r.responses} responses` : '') +
            (r.logs.length
              ? `, gateway logged ${r.logs.map((l) => `${l.count}× "${l.key}"`).join(', ')}`
              : ''),
        );
        await sleep(300); // let sockets of the last run close
      }
    }
  } finally {
    redis.disconnect();
    await stopAll();
  }

  const results = scenarios.map((s) => median(runs.get(s.id)));
  const base = results.find((r) => r.id === 'undici');
  for (const r of results) r.ratio = base ? r.rps / base.rps : undefined;
  const targets = checkTargets(results);
  const meta = {
    date: new Date().toISOString(),
    ...settings,
    node: process.version,
    load,
  };
  printReport(results, targets, meta);
  await writeReports(results, targets, meta);
  log('wrote bench/results.md and bench/results.json');
  const bad = results.filter((r) => r.errors > 0 || r.unexpected > 0).map((r) => r.id);
  if (bad.length) log(`WARNING: unexpected statuses or errors in ${bad.join(', ')} (see the notes above)`);
}

// Everything stops by itself: the whole run has a time budget.
const budgetMs =
  (settings.rounds * SCENARIOS.length * (settings.warmup + settings.duration + 20) + 60) * 1000;
const watchdog = setTimeout(() => {
  console.error(`[bench] still running after ${budgetMs / 1000} s: giving up`);
  stopAll().finally(() => process.exit(1));
}, budgetMs);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`[bench] ${signal}: stopping the servers`);
    stopAll().finally(() => process.exit(130));
  });
}

main().then(
  () => clearTimeout(watchdog),
  (err) => {
    clearTimeout(watchdog);
    console.error(`[bench] aborted: ${err.message}`);
    stopAll().finally(() => process.exit(1));
  },
);
