// `npm run bench:startup`: how fast a pure-proxy config starts, and how much memory it holds once
// it listens. A pure proxy (one listener, one remote upstream, one limiter, the memory store, no
// embedded service) should not pay for the services it does not run.
// Settings: BENCH_RUNS (default 5; the median counts), BENCH_CLI (default dist/cli.js, so a build
// of another commit can be measured the same way).
import { spawn } from 'node:child_process';
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

/** One start: milliseconds from spawn to the "listening" log line, and the RSS right after it. */
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
  const rss = rssMiB(child.pid);
  child.kill('SIGTERM');
  await exited;
  return { ms, rss };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = mkdtempSync(join(tmpdir(), 'tollgate-startup-'));
const config = join(dir, 'pure-proxy.yaml');
writeFileSync(config, PURE_PROXY);
const results = [];
for (let i = 0; i < runs; i++) results.push(await once_(config));
const ms = median(results.map((r) => r.ms));
const rss = median(results.map((r) => r.rss));
console.log(
  `[bench:startup] ${cli}: median of ${runs} starts: ${ms.toFixed(0)} ms to "listening", ` +
    `${rss.toFixed(1)} MiB RSS (runs: ${results.map((r) => `${r.ms.toFixed(0)}ms/${r.rss.toFixed(1)}MiB`).join(', ')})`,
);
