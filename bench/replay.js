// `npm run bench:replay`: how many access-log lines a second `tollgate replay` gets through on one
// core (the target: 200,000). Each scenario generates its log once (scripts/replay-log.ts: a week of
// a realistic shape), then replays it BENCH_ROUNDS times under `taskset -c 0` when taskset is
// installed; the report is the median round's lines a second, wall clock and per CPU second (the
// latter depends much less on a busy machine). Nothing listens and nothing is sent anywhere.
// Settings: BENCH_ROUNDS (3), BENCH_LINES (1000000), BENCH_ONLY (comma-separated scenario ids),
// BENCH_CLI (default dist/cli.js, to measure another build the same way), BENCH_COMPARE=<checkout>
// (that checkout's build replays the same log just before this one in every round: paired figures,
// each round's ratio, for a busy host; and the two builds' --json reports must be byte for byte the
// same, else the bench fails). BENCH_LOGS=<dir>: the generated logs are kept there and reused.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, closeSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ROOT, onPath } from './lib/processes.js';

const TARGET = 200_000;
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const lines = Number(process.env.BENCH_LINES ?? 1_000_000);
const only = (process.env.BENCH_ONLY ?? '').split(',').filter(Boolean);
const cli = resolve(ROOT, process.env.BENCH_CLI ?? 'dist/cli.js');
const compare = process.env.BENCH_COMPARE ? resolve(process.env.BENCH_COMPARE, 'dist/cli.js') : undefined;
const EXAMPLES = 'docs/examples/replay';

/**
 * What is measured. format: the log generated (scripts/replay-log.ts --format); config, baseline:
 * the configs replayed (the docs' worked example: sliding + fixed + token-bucket windows).
 */
export const SCENARIOS = [
  {
    id: 'replay-tollgate',
    label: "tollgate's own JSON lines with log.keyParts, the candidate config",
    format: 'tollgate',
    config: `${EXAMPLES}/candidate.yaml`,
  },
  {
    id: 'replay-combined',
    label: 'nginx combined lines (address and user agent hashed by replay), the candidate config',
    format: 'combined',
    config: `${EXAMPLES}/candidate.yaml`,
  },
  {
    id: 'replay-caddy',
    label: "Caddy's JSON access lines, the candidate config",
    format: 'caddy',
    config: `${EXAMPLES}/candidate.yaml`,
  },
  {
    id: 'replay-baseline',
    label: "tollgate's lines, the candidate and the baseline (two simulations a line)",
    format: 'tollgate',
    config: `${EXAMPLES}/candidate.yaml`,
    baseline: `${EXAMPLES}/current.yaml`,
  },
];

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function generate(dir, format) {
  const file = join(dir, `${format}-${lines}.log`);
  if (existsSync(file)) return file;
  // Written aside, then renamed: a kept log is always a whole one.
  const out = openSync(`${file}.part`, 'w');
  try {
    execFileSync(
      process.execPath,
      [
        '--import',
        'tsx',
        'scripts/replay-log.ts',
        '--lines',
        String(lines),
        '--days',
        '7',
        '--format',
        format,
      ],
      { cwd: ROOT, stdio: ['ignore', out, 'inherit'] },
    );
  } finally {
    closeSync(out);
  }
  renameSync(`${file}.part`, file);
  return file;
}

/** One replay: its stderr's "N lines in S s: X lines/s, Y lines per CPU second". */
function replayOnce(scenario, log, build = cli) {
  const args = [build, 'replay', '--json', '--config', scenario.config];
  if (scenario.baseline) args.push('--baseline', scenario.baseline);
  args.push(log);
  const pinned = onPath('taskset');
  const run = spawnSync(
    pinned ? 'taskset' : process.execPath,
    pinned ? ['-c', '0', process.execPath, ...args] : args,
    {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    },
  );
  const m = /replayed (\d+) lines in ([\d.]+) s: (\d+) lines\/s, (\d+) lines per CPU second/.exec(run.stderr);
  if (run.status !== 0 || !m)
    throw new Error(`${scenario.id}: replay failed (${run.status}):\n${run.stderr}`);
  return {
    lines: Number(m[1]),
    seconds: Number(m[2]),
    perSecond: Number(m[3]),
    perCpuSecond: Number(m[4]),
    report: run.stdout,
  };
}

if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm run build\``);
if (compare && !existsSync(compare)) throw new Error(`BENCH_COMPARE: ${compare} is missing (build it first)`);
const kept = process.env.BENCH_LOGS;
if (kept) mkdirSync(kept, { recursive: true });
const dir = kept ?? mkdtempSync(join(tmpdir(), 'tollgate-bench-replay-'));
try {
  const chosen = SCENARIOS.filter((s) => only.length === 0 || only.includes(s.id));
  if (chosen.length === 0) throw new Error(`no scenario: ${SCENARIOS.map((s) => s.id).join(', ')}`);
  console.log(
    `[bench:replay] ${lines} lines a log, ${rounds} round(s) each, ` +
      (onPath('taskset') ? 'pinned to CPU 0 (taskset)' : 'not pinned (no taskset)'),
  );
  for (const scenario of chosen) {
    const log = generate(dir, scenario.format);
    const base = [];
    const runs = Array.from({ length: rounds }, () => {
      if (compare) base.push(replayOnce(scenario, log, compare));
      return replayOnce(scenario, log);
    });
    const perSecond = median(runs.map((r) => r.perSecond));
    const perCpu = median(runs.map((r) => r.perCpuSecond));
    const verdict = perCpu >= TARGET ? 'meets' : 'BELOW';
    console.log(
      `[bench:replay] ${scenario.id}: ${scenario.label}: median ${perSecond} lines/s wall, ` +
        `${perCpu} lines per CPU second (${verdict} the ${TARGET} target)`,
    );
    if (compare) {
      const pairs = runs.map((r, i) => `${base[i].perCpuSecond} → ${r.perCpuSecond}`).join(', ');
      const ratio = median(runs.map((r, i) => r.perCpuSecond / base[i].perCpuSecond));
      const same = runs.every((r, i) => r.report === base[i].report);
      console.log(
        `[bench:replay] ${scenario.id}: against ${compare}, lines per CPU second a round: ${pairs} ` +
          `(median ratio ${ratio.toFixed(2)}×); --json reports ${same ? 'byte for byte the same' : 'DIFFER'}`,
      );
      if (!same) process.exitCode = 1;
    }
  }
} finally {
  if (!kept) rmSync(dir, { recursive: true, force: true });
}
