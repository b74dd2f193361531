// `npm run bench:startup`: how fast a pure-proxy config starts, and how much memory it holds once
// it listens. A pure proxy (one listener, one remote upstream, one limiter, the memory store, no
// embedded service) should not pay for the services it does not run. Wall time depends on how
// busy the machine is; the CPU time the process spent until it listened depends much less on it.
// Settings: BENCH_RUNS (default 5; the median counts), BENCH_CLI (default dist/cli.js, so a build
// of another commit can be measured the same way).
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ROOT } from './lib/processes.js';

const runs = Number(process.env.BENCH_RUNS ?? 5);
const cli = resolve(ROOT, process.env.BENCH_CLI ?? 'dist/cli.js');

const PURE_PROXY = `
listeners: [{ name: public, host: 127.0.0.1, port: 0 }]
reload: { watch: false }
log: { level: info }
identity: { workspaceTokens: { source: static } }
upstreams:
  app: { url: "http://127.0.0.1:9" }
limiters:
  per-ip: { windows: [{ limit: 100, period: 1m, key: [ip] }] }
routes:
  - { name: all, paths: ["/*"], upstream: app, limiters: [per-ip] }
`;

/** Resident memory of a live process, in MiB (VmRSS of /proc/<pid>/status). */
function rssMiB(pid) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? NaN) / 1024;
}

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** CPU time (user + system) a live process has used, in ms (/proc/<pid>/stat, fields 14 and 15). */
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** One start: ms from spawn to the "listening" log line, and the CPU time and RSS right after it. */
async function once_(config) {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [cli, 'start', '--config', config], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  let rest = '';
  const listening = new Promise((done, fail) => {
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      if (lines.some((l) => l.includes('"msg":"listening"'))) done();
    });
    child.on('exit', (code) => fail(new Error(`tollgate exited (${code}) before listening`)));
  });
  await listening;
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const cpu = cpuMs(child.pid);
  const rss = rssMiB(child.pid);
  child.kill('SIGTERM');
  await exited;
  return { ms, cpu, rss };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = mkdtempSync(join(tmpdir(), 'tollgate-startup-'));
const config = join(dir, 'pure-proxy.yaml');
writeFileSync(config, PURE_PROXY);
const results = [];
for (let i = 0; i < runs; i++) results.push(await once_(config));
const ms = median(results.map((r) => r.ms));
const cpu = median(results.map((r) => r.cpu));
const rss = median(results.map((r) => r.rss));
console.log(
  `[bench:startup] ${cli}: median of ${runs} starts: ${ms.toFixed(0)} ms to "listening" ` +
    `(${cpu.toFixed(0)} ms CPU), ${rss.toFixed(1)} MiB RSS\n  runs: ` +
    results
      .map((r) => `${r.ms.toFixed(0)} ms / ${r.cpu.toFixed(0)} ms CPU / ${r.rss.toFixed(1)} MiB`)
      .join(', '),
);
