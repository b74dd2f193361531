// `npm run bench:instructions`: instructions per request of the h2load scenarios of `npm run bench`
// under callgrind, with a fixed number of requests over the same connections, so a ratio between
// two protocols does not move with the host's load or with how fast the load generator is.
//
// Each server runs under valgrind (nothing counted at first) with node --perf-basic-prof; h2load
// sends the warm-up, then, counted, a short run and a long run of the scenario's connections and
// streams. The long run's count minus the short one's, over the requests between them, is the
// cost of a request with the connections' set-up (TLS handshakes, SETTINGS) taken out.
//
// Settings: BENCH_ONLY (ids, default tollgate-tls-h1,tollgate-h2,tollgate-h2-m10), BENCH_REPEAT (1),
// BENCH_INSTR_WARMUP (5000 requests), BENCH_INSTR_REQUESTS (2500: the long run's extra requests),
// BENCH_CONNECTIONS (32). callgrind runs ~50× slower: one scenario takes a few minutes.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect as tlsConnect } from 'node:tls';
import { COMPILER, callgrindArgs, dump, functionsOf, instrument, totalOf } from './callgrind.js';
import { ROOT, freePort, startNode, stop, stopAll, waitForHttp } from './processes.js';
import { formatSpread, spreadOf } from './repeats.js';
import { SCENARIOS } from './scenarios.js';

const env = (name, fallback) => Number(process.env[name] || fallback);
const only = (process.env.BENCH_ONLY || 'tollgate-tls-h1,tollgate-h2,tollgate-h2-m10').split(',');
const repeat = env('BENCH_REPEAT', 1);
const warmup = env('BENCH_INSTR_WARMUP', 5000);
const measured = env('BENCH_INSTR_REQUESTS', 2500);
const connections = env('BENCH_CONNECTIONS', 32);
const SHORT = 500;
const BODY = '{"event":"bench"}';

const log = (m) => console.log(`[instructions] ${m}`);

/** h2load -n: exactly `n` requests; resolves with the 2xx count (every one must be a 200). */
function h2load(port, path, n, loadgen, bodyFile) {
  const c = loadgen.connections ?? connections;
  const args = [`-n${Math.max(n, c)}`, `-c${c}`, `-m${loadgen.streams ?? 1}`, '-t1', '-d', bodyFile];
  args.push('-H', 'content-type: application/json', ...(loadgen.h1 ? ['--h1'] : []));
  args.push(`https://127.0.0.1:${port}${path}`);
  return new Promise((resolve, reject) => {
    const child = spawn('h2load', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('exit', (code) => {
      const ok = /status codes: (\d+) 2xx/.exec(out);
      if (code !== 0 || !ok) reject(new Error(`h2load failed: ${out.slice(-400)}`));
      else resolve(Number(ok[1]));
    });
  });
}

async function waitForTls(port, proc, timeoutMs = 180_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!proc.alive) throw new Error(`${proc.name} exited: ${proc.lines.slice(-10).join('\n')}`);
    const ok = await new Promise((resolve) => {
      const s = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false });
      s.once('secureConnect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${proc.name}: no TLS handshake`);
    await sleep(500);
  }
}

/** One counted run of a scenario: { perRequest, withSetUp, groups: Map group → Ir per request }. */
async function measure(scenario, ctx) {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-instr-'));
  const port = await freePort();
  const childEnv = {
    PORT: String(port),
    UPSTREAM_URL: `http://127.0.0.1:${ctx.upstreamPort}`,
    TLS_CERT: ctx.tls.cert,
    TLS_KEY: ctx.tls.key,
    LOG_LEVEL: 'warn',
    ...scenario.env,
  };
  let target = scenario.script;
  let args = [];
  if (scenario.kind === 'tollgate') {
    // A server slowed 50× would shed load: never here. The admin port is only to satisfy the config.
    const config = join(dir, 'gateway.yaml');
    const base = readFileSync(join(ROOT, scenario.config ?? 'bench/gateway.yaml'), 'utf8');
    writeFileSync(config, `${base}\nrequests:\n  shedAfter: 0\n`);
    childEnv.ADMIN_PORT = String(await freePort());
    target = 'dist/cli.js';
    args = ['start', '--config', config];
  }
  const out = join(dir, 'callgrind.out');
  const proc = startNode(scenario.id, target, {
    args,
    // (V8's own log, which --perf-basic-prof also writes, goes to the temporary folder.)
    nodeArgs: ['--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${join(dir, 'v8.log')}`],
    env: childEnv,
    wrapper: ['valgrind', ...callgrindArgs(out)],
  });
  const pid = proc.child.pid;
  try {
    await waitForTls(port, proc);
    const lg = scenario.loadgen;
    const path = scenario.path;
    await h2load(port, path, warmup, lg, ctx.bodyFile);
    await instrument(pid, true);
    const short = await h2load(port, path, SHORT, lg, ctx.bodyFile);
    await dump(pid);
    const long = await h2load(port, path, SHORT + measured, lg, ctx.bodyFile);
    await dump(pid);
    await instrument(pid, false);
    const [a, b] = [`${out}.1`, `${out}.2`];
    const n = long - short;
    const [fa, fb] = [await functionsOf(a, pid), await functionsOf(b, pid)];
    const functions = new Map();
    for (const [fn, { ir, group }] of fb) functions.set(fn, { group, ir: (ir - (fa.get(fn)?.ir ?? 0)) / n });
    for (const [fn, { ir, group }] of fa) if (!fb.has(fn)) functions.set(fn, { group, ir: -ir / n });
    const groups = new Map();
    for (const { group, ir } of functions.values()) groups.set(group, (groups.get(group) ?? 0) + ir);
    // The compiler's work depends on when V8 decides to optimise, not on the request: apart.
    const compiler = groups.get(COMPILER) ?? 0;
    return {
      perRequest: (totalOf(b) - totalOf(a)) / n - compiler,
      withSetUp: totalOf(b) / long,
      compiler,
      groups,
      functions,
    };
  } finally {
    await stop(proc, 20_000);
    if (process.env.BENCH_INSTR_KEEP) {
      log(`${scenario.id}: callgrind files kept in ${dir} (perf map /tmp/perf-${pid}.map)`);
    } else {
      rmSync(dir, { recursive: true, force: true });
      rmSync(`/tmp/perf-${pid}.map`, { force: true });
    }
  }
}

async function main() {
  const scenarios = only.map((id) => {
    const s = SCENARIOS.find((x) => x.id === id);
    if (!s?.loadgen) throw new Error(`${id}: not an h2load scenario of bench/lib/scenarios.js`);
    return s;
  });
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-instr-run-'));
  const tls = { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
  await new Promise((resolve, reject) => {
    const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
    args.push('-keyout', tls.key, '-out', tls.cert, '-days', '1', '-subj', '/CN=127.0.0.1');
    spawn('openssl', args, { stdio: 'ignore' }).once('exit', (c) => (c === 0 ? resolve() : reject()));
  });
  const bodyFile = join(dir, 'body.json');
  writeFileSync(bodyFile, BODY);
  const upstreamPort = await freePort();
  const upstream = startNode('upstream', 'bench/servers/upstream.js', {
    env: { PORT: String(upstreamPort) },
  });
  await waitForHttp(upstream, upstreamPort);
  const ctx = { upstreamPort, tls, bodyFile };
  const results = new Map(scenarios.map((s) => [s.id, []]));
  try {
    for (let r = 1; r <= repeat; r++) {
      for (const s of scenarios) {
        const m = await measure(s, ctx);
        results.get(s.id).push(m);
        log(
          `repeat ${r}/${repeat} ${s.id}: ${Math.round(m.perRequest)} instructions/request ` +
            `(the compiler apart: ${Math.round(m.compiler)}; all counted over the long run, set-up ` +
            `and compiler included: ${Math.round(m.withSetUp)})`,
        );
      }
    }
  } finally {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
  report(scenarios, results);
}

function report(scenarios, results) {
  const fmt = (n) => Math.round(n).toLocaleString('en');
  console.log(
    `\ninstructions per request (${measured} requests, set-up taken out; median, low–high of ${repeat}):`,
  );
  for (const s of scenarios) {
    const runs = results.get(s.id);
    console.log(`  ${s.id}: ${formatSpread(spreadOf(runs.map((m) => m.perRequest / 1000)), 1, 'k')}`);
  }
  const base = scenarios[0].id;
  for (const s of scenarios.slice(1)) {
    // Ratios as the bench's: the denominator's cost over this one's (above 1: this one is cheaper).
    const ratios = results.get(s.id).map((m, i) => results.get(base)[i].perRequest / m.perRequest);
    console.log(`  ${base} / ${s.id} (throughput ratio): ${formatSpread(spreadOf(ratios))}`);
  }
  const groups = [
    ...new Set(scenarios.flatMap((s) => results.get(s.id).flatMap((m) => [...m.groups.keys()]))),
  ];
  const median = (v) => spreadOf(v)?.median ?? 0;
  const rows = groups
    .map((g) => [g, ...scenarios.map((s) => median(results.get(s.id).map((m) => m.groups.get(g) ?? 0)))])
    .sort((a, b) => b[b.length - 1] - a[a.length - 1]);
  console.log(`\nthousands of instructions per request by group (median):`);
  console.log(`| group | ${scenarios.map((s) => s.id).join(' | ')} |`);
  console.log(`| --- | ${scenarios.map(() => '---:').join(' | ')} |`);
  for (const [g, ...v] of rows.filter((r) => r[0] !== COMPILER))
    console.log(`| ${g} | ${v.map((x) => (x / 1000).toFixed(1)).join(' | ')} |`);
  console.log(
    `| total (compiler apart) | ${scenarios.map((s) => fmt(median(results.get(s.id).map((m) => m.perRequest)) / 1000)).join(' | ')} |`,
  );
  const top = Number(process.env.BENCH_INSTR_TOP || 0);
  for (const s of top > 0 ? scenarios.slice(1) : []) {
    // The functions that cost this scenario most over the first one (last repeat of each).
    const [mine, theirs] = [results.get(s.id).at(-1).functions, results.get(base).at(-1).functions];
    const delta = [...mine].map(([fn, { ir }]) => [fn, ir - (theirs.get(fn)?.ir ?? 0)]);
    delta.sort((x, y) => y[1] - x[1]);
    console.log(`\n${s.id} over ${base}, instructions per request, the ${top} largest differences:`);
    for (const [fn, d] of delta.slice(0, top)) console.log(`  ${Math.round(d)}  ${fn.slice(0, 160)}`);
  }
}

main().catch(async (err) => {
  console.error(`[instructions] aborted: ${err.stack ?? err}`);
  await stopAll();
  process.exit(1);
});
