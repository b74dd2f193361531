// The bench's figures: rounds folded into medians, ratios against the baseline in req/s and in CPU
// per request, the targets, and the report on the terminal, in bench/results.md and results.json.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from './processes.js';
import { formatSpread, spreadOf, spreadVerdict } from './repeats.js';
import { BASELINE, ISSUE_BASELINE, TARGETS } from './scenarios.js';

const median = (values) => {
  const sorted = values.filter((v) => v !== undefined).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const sum = (values) => values.reduce((n, v) => n + (v ?? 0), 0);

/** Below this share of its CPU, a pinned server was not what bounded its own throughput. */
const SATURATED = 0.85;

function fold(scenario, runs) {
  const byRps = [...runs].sort((a, b) => a.rps - b.rps);
  const mid = byRps[Math.floor((byRps.length - 1) / 2)];
  const cpuPerReq = median(runs.map((r) => r.cpuPerReq));
  const byCpu = [...runs].sort((a, b) => (a.cpuPerReq ?? 0) - (b.cpuPerReq ?? 0));
  const midCpu = byCpu[Math.floor((byCpu.length - 1) / 2)];
  const logs = {};
  for (const r of runs) for (const [k, n] of Object.entries(r.logs)) logs[k] = (logs[k] ?? 0) + n;
  const decisions = {};
  for (const r of runs)
    for (const [k, n] of Object.entries(r.decisions ?? {})) decisions[k] = (decisions[k] ?? 0) + n;
  return {
    id: scenario.id,
    label: scenario.label,
    expect: scenario.expect,
    rps: median(runs.map((r) => r.rps)),
    cpuPerReq,
    cpuBusy: median(runs.map((r) => r.cpuBusy)),
    readsPerReq: median(runs.map((r) => r.loop?.readsPerReq)),
    writesPerReq: median(runs.map((r) => r.loop?.writesPerReq)),
    sleepsPerReq: median(runs.map((r) => r.loop?.sleepsPerReq)),
    clientCpuPerReq: median(runs.map((r) => r.clientCpuPerReq)),
    othersOnServerCpu: median(runs.map((r) => r.othersOnServerCpu)),
    sharedCpuBusy: median(runs.map((r) => r.sharedCpuBusy)),
    steal: runs.some((r) => r.steal !== undefined) ? Math.max(...runs.map((r) => r.steal ?? 0)) : undefined,
    p50Ms: mid.p50Ms,
    p99Ms: mid.p99Ms,
    responses: sum(runs.map((r) => r.responses)),
    unexpected: sum(runs.map((r) => r.unexpected)),
    errors: sum(runs.map((r) => r.errors)),
    scriptCallsPerResponse: runs[0].redis
      ? median(runs.map((r) => r.redis.scriptCallsPerResponse))
      : undefined,
    scriptCalls: runs[0].redis ? sum(runs.map((r) => r.redis.scriptCalls)) : undefined,
    redisCommands: runs[0].redis ? midCpu.redis.commands : undefined,
    redisCpuPerReq: runs[0].redis ? median(runs.map((r) => r.redis.cpuPerReq)) : undefined,
    // Redis Cluster: each master's script calls and CPU per response (medians over the rounds).
    redisShards: runs[0].redisShards?.map((s, i) => ({
      port: s.port,
      scriptCallsPerResponse: median(runs.map((r) => r.redisShards[i].scriptCallsPerResponse)),
      cpuPerReq: median(runs.map((r) => r.redisShards[i].cpuPerReq)),
    })),
    counted: runs[0].counted !== undefined ? sum(runs.map((r) => r.counted)) : undefined,
    decisions: scenario.decisions ? decisions : undefined,
    logs,
    processes: midCpu.processes,
    affinity: [...new Set(runs.map((r) => r.affinity).filter(Boolean))].join(' '),
    rounds: runs.map((r) => ({
      rps: r.rps,
      cpuPerReq: r.cpuPerReq,
      cpuBusy: r.cpuBusy,
      exited: r.exitedDuringWindow,
    })),
  };
}

function checkTargets(results) {
  const byId = new Map(results.map((r) => [r.id, r]));
  return TARGETS.map((t) => {
    const a = byId.get(t.of);
    const b = byId.get(t.over);
    if (!a || !b) return { ...t, rpsRatio: undefined, cpuRatio: undefined };
    const rpsRatio = a.rps / b.rps;
    const cpuRatio = a.cpuPerReq && b.cpuPerReq ? b.cpuPerReq / a.cpuPerReq : undefined;
    return {
      ...t,
      rpsRatio,
      cpuRatio,
      met: t.min === undefined ? undefined : rpsRatio >= t.min,
      metCpu: t.min === undefined || cpuRatio === undefined ? undefined : cpuRatio >= t.min,
    };
  });
}

function notesOf(results) {
  const out = [];
  for (const r of results) {
    const rounds = r.rounds
      .map(
        (x) =>
          `${Math.round(x.rps)} req/s${x.cpuPerReq !== undefined ? ` @ ${x.cpuPerReq.toFixed(1)} µs` : ''}`,
      )
      .join('; ');
    if (r.rounds.length > 1) out.push(`${r.id}: rounds ${rounds} (medians shown)`);
    if (r.unexpected > 0) {
      const letThrough = r.decisions?.store_error
        ? ` (the limiter saw ${r.decisions.store_error} store errors, Redis answering later than the ` +
          'store commandTimeout, and let those requests through: onError: open)'
        : '';
      out.push(`${r.id}: ${r.unexpected} responses were not ${r.expect}${letThrough}`);
    } else if (r.decisions?.store_error) {
      out.push(
        `${r.id}: ${r.decisions.store_error} store errors (Redis answering later than the store ` +
          'commandTimeout); the requests went on, as onError: open says',
      );
    }
    if (r.errors > 0) out.push(`${r.id}: ${r.errors} socket errors or timeouts`);
    if (r.counted !== undefined) {
      out.push(
        `${r.id}: the Redis counters grew by ${r.counted} over windows that got ${r.responses} responses`,
      );
    }
    if (r.decisions) {
      out.push(
        `${r.id}: limiter decisions over the windows ${JSON.stringify(r.decisions)} for ${r.responses} responses`,
      );
    }
    for (const [key, n] of Object.entries(r.logs)) out.push(`${r.id}: the gateway logged ${n}× ${key}`);
    if (r.rounds.some((x) => x.exited)) out.push(`${r.id}: a process of its tree exited during a window`);
  }
  return out;
}

export function summarise(scenarios, runs, profiles, meta) {
  const results = scenarios.map((s) => fold(s, runs.get(s.id)));
  const base = results.find((r) => r.id === BASELINE);
  for (const r of results) {
    r.rpsRatio = base ? r.rps / base.rps : undefined;
    r.cpuRatio = base?.cpuPerReq && r.cpuPerReq ? base.cpuPerReq / r.cpuPerReq : undefined;
  }
  return { meta, results, targets: checkTargets(results), profiles, notes: notesOf(results) };
}

/**
 * Per scenario and per target: the CPU-per-request and req/s ratios of each repeat (its own rounds
 * folded into medians against the same repeat's baseline), and their median and spread.
 */
export function repeatSpreads(scenarios, repeatRuns, meta) {
  const perRepeat = repeatRuns.map((runs) => summarise(scenarios, runs, [], meta));
  const scenarioRows = scenarios.map((s) => {
    const of = perRepeat.map((rep) => rep.results.find((r) => r.id === s.id));
    return {
      id: s.id,
      cpuRatio: spreadOf(of.map((r) => r?.cpuRatio)),
      rpsRatio: spreadOf(of.map((r) => r?.rpsRatio)),
      cpuPerReq: spreadOf(of.map((r) => r?.cpuPerReq)),
    };
  });
  const targetRows = perRepeat[0].targets.map((t, i) => ({
    name: t.name,
    min: t.min,
    cpuRatio: spreadOf(perRepeat.map((rep) => rep.targets[i].cpuRatio)),
    rpsRatio: spreadOf(perRepeat.map((rep) => rep.targets[i].rpsRatio)),
  }));
  return { repeats: repeatRuns.length, scenarios: scenarioRows, targets: targetRows };
}

const fmt = {
  int: (n) => (n === undefined ? 'n/a' : Math.round(n).toLocaleString('en-US')),
  us: (n) => (n === undefined ? 'n/a' : n.toFixed(1)),
  ms: (n) => (n === undefined ? 'n/a' : n.toFixed(2)),
  ratio: (n) => (n === undefined ? 'n/a' : `${n.toFixed(2)}×`),
  pct: (n) => (n === undefined ? 'n/a' : `${Math.round(n * 100)}%`),
  calls: (n) => (n === undefined ? '' : n.toFixed(3)),
};

const HEADER = [
  'scenario',
  'req/s',
  'CPU µs/req',
  'CPU busy',
  'p50 ms',
  'p99 ms',
  'req/s vs base',
  'CPU vs base',
  'script calls/resp',
  'Redis CPU µs/resp',
  'unexpected/responses',
  'errors',
];

const rows = (results) =>
  results.map((r) => [
    `${r.id}: ${r.label}`,
    fmt.int(r.rps),
    fmt.us(r.cpuPerReq),
    fmt.pct(r.cpuBusy),
    fmt.ms(r.p50Ms),
    fmt.ms(r.p99Ms),
    fmt.ratio(r.rpsRatio),
    fmt.ratio(r.cpuRatio),
    fmt.calls(r.scriptCallsPerResponse),
    r.redisCpuPerReq === undefined ? '' : fmt.us(r.redisCpuPerReq),
    `${r.unexpected}/${r.responses}`,
    String(r.errors),
  ]);

const CPU_HEADER = ['scenario', 'server CPU used', 'others on that CPU', 'shared CPU busy', 'steal (max)'];
const cpuRows = (results) =>
  results.map((r) => [
    r.id,
    fmt.pct(r.cpuBusy),
    fmt.pct(r.othersOnServerCpu),
    fmt.pct(r.sharedCpuBusy),
    fmt.pct(r.steal),
  ]);

const verdict = (met) => (met === undefined ? 'not measured' : met ? 'MET' : 'NOT MET');

const targetRows = (targets) =>
  targets.map((t) => [
    t.name,
    fmt.ratio(t.rpsRatio),
    t.min === undefined ? '(no target)' : verdict(t.met),
    fmt.ratio(t.cpuRatio),
    t.min === undefined ? '(no target)' : verdict(t.metCpu),
  ]);

const SPREAD_HEADER = ['scenario', 'CPU µs/req', 'CPU/req vs base', 'req/s vs base'];
const spreadScenarioRows = (spreads) =>
  spreads.scenarios.map((r) => [
    r.id,
    formatSpread(r.cpuPerReq, 1, ''),
    formatSpread(r.cpuRatio),
    formatSpread(r.rpsRatio),
  ]);
const SPREAD_TARGET_HEADER = ['target', 'CPU/req ratio', 'in CPU/req', 'req/s ratio'];
const spreadTargetRows = (spreads) =>
  spreads.targets.map((t) => [
    t.name,
    formatSpread(t.cpuRatio),
    spreadVerdict(t.min, t.cpuRatio),
    formatSpread(t.rpsRatio),
  ]);

function spreadSection(spreads) {
  if (!spreads) return [];
  return [
    `## Over ${spreads.repeats} repeats`,
    '',
    `The rounds were run ${spreads.repeats} times over (BENCH_REPEAT); each cell is the median of the ` +
      "repeats' ratios with the lowest and highest in brackets. A target is MET when every repeat meets " +
      'it, NOT MET when none does, and "within the spread" otherwise; a change smaller than a spread is not measurable.',
    '',
    ...mdTable(SPREAD_HEADER, spreadScenarioRows(spreads)),
    '',
    ...mdTable(SPREAD_TARGET_HEADER, spreadTargetRows(spreads)),
    '',
  ];
}

const TARGET_HEADER = ['target (same run)', 'req/s ratio', 'in req/s', 'CPU/req ratio', 'in CPU/req'];

const range = (values) => {
  const v = values.filter((x) => x !== undefined);
  return v.length ? `${fmt.pct(Math.min(...v))}–${fmt.pct(Math.max(...v))}` : 'n/a';
};

/** Whether the servers' own CPUs bounded this run, and so which ratios to read. */
function readingLine(results, meta) {
  if (!meta.pinning.pinned) return undefined;
  const measured = results.filter((r) => r.cpuBusy !== undefined);
  if (measured.length === 0) return undefined;
  const short = measured.filter((r) => r.cpuBusy < SATURATED);
  if (short.length === 0) {
    return `Every server kept its CPU busy (${range(measured.map((r) => r.cpuBusy))}): req/s and CPU µs per request tell the same story.`;
  }
  return (
    `In this run the servers used ${range(measured.map((r) => r.cpuBusy))} of their CPU; other processes of ` +
    `the machine took ${range(measured.map((r) => r.othersOnServerCpu))} of it, and the shared CPU was ` +
    `${range(measured.map((r) => r.sharedCpuBusy))} busy. ${short.length} of ${measured.length} servers used ` +
    `less than ${fmt.pct(SATURATED)} of their CPU, so their req/s were bounded by the shared machine rather ` +
    'than by their own CPU: read the CPU µs per request ratios for this run; the req/s verdicts are given ' +
    'as the issue states its targets.'
  );
}

function workersLines(results) {
  const w2 = results.find((r) => r.id === 'tollgate-redis-w2');
  if (!w2?.processes || w2.processes.length < 2) return [];
  const one = results.find((r) => r.id === 'tollgate-redis');
  // The tree's root is the cluster primary; the processes under it are the workers.
  const [primary, ...workers] = w2.processes;
  const workersPerReq = sum(workers.map((p) => p.cpuPerReq));
  const shares = workers.map((p) => fmt.pct(p.cpuPerReq / workersPerReq)).join(' / ');
  return [
    `A request cost ${fmt.us(workersPerReq)} CPU µs in a worker (the ${workers.length} workers' CPU ` +
      `over all responses; they took ${shares} of it) and ${fmt.us(primary.cpuPerReq)} µs in the primary, ` +
      `${fmt.us(w2.cpuPerReq)} µs in all` +
      (one?.cpuPerReq ? `, against ${fmt.us(one.cpuPerReq)} µs in a single process (tollgate-redis).` : '.'),
  ];
}

function printTable(header, body) {
  const table = [header, ...body];
  const widths = header.map((_, i) => Math.max(...table.map((row) => row[i].length)));
  const line = (row) =>
    row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of body) console.log(line(row));
}

export function printReport({ meta, results, targets, profiles, notes, spreads }) {
  console.log('');
  console.log(meta.pinning.statement);
  console.log('');
  printTable(HEADER, rows(results));
  const reading = readingLine(results, meta);
  if (reading) console.log(`\n${reading}`);
  console.log('');
  printTable(TARGET_HEADER, targetRows(targets));
  if (spreads) {
    console.log(`\nover ${spreads.repeats} repeats: median (lowest–highest)\n`);
    printTable(SPREAD_HEADER, spreadScenarioRows(spreads));
    console.log('');
    printTable(SPREAD_TARGET_HEADER, spreadTargetRows(spreads));
  }
  for (const line of workersLines(results)) console.log(`\n${line}`);
  for (const p of profiles) {
    console.log(`\nprofile of ${p.id} (estimate, µs per request by step):`);
    for (const s of p.steps) console.log(`  ${fmt.us(s.usPerReq).padStart(6)}  ${s.step}`);
  }
  if (notes.length) {
    console.log('\nnotes:');
    for (const n of notes) console.log(`  ${n}`);
  }
  console.log(`\nload average before ${meta.loadBefore}, after ${meta.loadAfter}\n`);
}

const mdTable = (header, body) => {
  const cell = (s) => String(s).replace(/\|/g, '\\|');
  return [
    `| ${header.map(cell).join(' | ')} |`,
    `| ${header.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`,
    ...body.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ];
};

function profileSection(profiles) {
  if (profiles.length === 0) return [];
  const out = [
    "## Where tollgate's CPU goes (estimate)",
    '',
    'From one extra run of each scenario under `node --cpu-prof` (sampling every ' +
      `${profiles[0].intervalUs} µs; that run's req/s are not in the table above): the self time of the ` +
      'samples taken during its measured window, by step, divided by its responses. A sample counts ' +
      'for the nearest frame at or above it that is tollgate code (`dist/<folder>`) or a library, so a ' +
      'socket write made by undici is relaying and one made by ioredis is the store. It is an estimate: ' +
      'sampling misses short calls, the profiler adds its own cost, and it sees only the JavaScript ' +
      'thread (the /proc figure also counts GC helper threads and the kernel).',
    '',
  ];
  for (const p of profiles) {
    out.push(
      `**${p.id}**: ${fmt.us(p.profiledPerReq)} µs per request in samples, against ${fmt.us(p.statCpuPerReq)} ` +
        `CPU µs per request from /proc in the same run (${fmt.int(p.responses)} responses, ${fmt.int(p.samples)} samples` +
        `${p.windowed ? '' : ', whole profile: no sample fell in the window'}).`,
      '',
      ...mdTable(
        ['step', 'µs per request', 'of which in Node internals and natives it called', 'share'],
        p.steps.map((s) => [s.step, fmt.us(s.usPerReq), fmt.us(s.beneathPerReq), fmt.pct(s.share)]),
      ),
      '',
    );
  }
  return out;
}

function issueSection(results) {
  const rows = results
    .filter((r) => ISSUE_BASELINE.has(r.id))
    .map((r) => [r.id, fmt.ratio(ISSUE_BASELINE.get(r.id)), fmt.ratio(r.rpsRatio), fmt.ratio(r.cpuRatio)]);
  if (rows.length < 2) return [];
  return [
    "## Beside the issue's baseline",
    '',
    "The ratios the performance issue measured (pinned, wrk -t1 -c32, before its work) and this run's.",
    '',
    ...mdTable(
      ['scenario', "issue's req/s ratio", "this run's req/s ratio", "this run's CPU/req ratio"],
      rows,
    ),
    '',
  ];
}

function markdown({ meta, results, targets, profiles, notes, spreads }) {
  const redisRows = results.filter((r) => r.scriptCallsPerResponse !== undefined);
  return [
    '# Benchmark results',
    '',
    `Measured by \`npm run bench\` on ${meta.date.slice(0, 10)}: ${meta.machine}, Node ${meta.node}, ` +
      `redis-server ${meta.redis}. Load average ${meta.loadBefore} before the run and ${meta.loadAfter} ` +
      'after it: the machine is shared with other work, so absolute figures move between runs; the ratios ' +
      'and CPU µs per request are steadier.',
    '',
    `Load: ${meta.loadGenerator}, ${meta.threads ? `${meta.threads} thread, ` : ''}${meta.connections} ` +
      `connections, ${meta.warmup} s warm-up then ${meta.duration} s measured per scenario, ${meta.rounds} ` +
      'rounds (every scenario once per round, in turn), medians shown. Every request is a POST with a ' +
      'small JSON body, answered 200 by one local node:http upstream with a small JSON body. tollgate ' +
      'runs with `LOG_LEVEL=warn` and bench/gateway.yaml: one limiter of 1e9 an hour keyed by client IP ' +
      'counts every forwarded request; the 429 scenarios flood a route limited to 1 an hour. The Node ' +
      'peers forward over a keep-alive agent and use ioredis with auto-pipelining, as tollgate does.' +
      (meta.loadGeneratorNote ? ` ${meta.loadGeneratorNote}` : ''),
    '',
    `**Placement.** ${meta.pinning.statement}` +
      (meta.pinning.pinned
        ? ' So req/s measures what the one CPU of the server under test can do, as long as that CPU is ' +
          'busy (the CPU busy column); where it is not, the shared CPU bounded the run and CPU µs per ' +
          'request is the figure to compare.'
        : ''),
    '',
    '**CPU µs per request**: utime + stime of the server under test and all its child processes ' +
      `(/proc/<pid>/stat, ${meta.clockTicks} ticks a second) over the measured window, divided by the ` +
      'responses in it. **CPU vs base** is the baseline’s CPU µs per request over this one’s: the ' +
      'req/s ratio a CPU-bound server would show. **CPU busy**: that CPU time over the window’s wall ' +
      'time. **Script calls/resp**: EVAL/EVALSHA calls in Redis (`INFO commandstats`) over the window, ' +
      'per response; **Redis CPU µs/resp**: redis-server’s own CPU (`INFO cpu`) per response. CPU µs ' +
      'per request still moves with the machine’s load: a server fed fewer requests per event-loop turn ' +
      '(because the shared CPU is slow to send them) spends more per request on wake-ups and system ' +
      'calls; the rounds in the notes show the spread.',
    '',
    `Baseline (1.00×): \`${BASELINE}\`.`,
    '',
    ...mdTable(HEADER, rows(results)),
    '',
    ...(readingLine(results, meta) ? [`**Reading this run.** ${readingLine(results, meta)}`, ''] : []),
    ...(meta.pinning.pinned
      ? [
          '## The two CPUs during the windows',
          '',
          `Whole-CPU figures from /proc/stat, every process counted (medians over the rounds): the server's ` +
            `CPU ${meta.pinning.serverCpu}, what other processes of the machine took of it, and the shared CPU ` +
            `${meta.pinning.restCpu} (wrk, upstream, Redis and the rest of the machine).`,
          '',
          ...mdTable(CPU_HEADER, cpuRows(results)),
          '',
        ]
      : []),
    '## Targets',
    '',
    'Judged in req/s, as the issue states them, and shown in CPU per request beside.',
    '',
    ...mdTable(TARGET_HEADER, targetRows(targets)),
    '',
    ...spreadSection(spreads),
    ...issueSection(results),
    ...(redisRows.length
      ? [
          '## Redis script calls per request',
          '',
          'EVAL/EVALSHA calls over the measured windows against the responses in them. A ratio a ' +
            'little above 1 is the requests still in flight when wrk stopped: Redis counted them, wrk ' +
            'did not wait for their responses. `INFO commandstats` also counts the commands a script ' +
            'runs inside Redis, so the other commands listed are the scripts’ own work, not round trips.',
          '',
          ...redisRows.map(
            (r) =>
              `- ${r.id}: ${fmt.int(r.scriptCalls)} script calls for ${fmt.int(r.responses)} responses ` +
              `(${fmt.calls(r.scriptCallsPerResponse)} per response)` +
              `; commands in the median window: ${JSON.stringify(r.redisCommands)}` +
              (r.redisShards
                ? '; per master (script calls, Redis CPU µs per response): ' +
                  r.redisShards
                    .map((s) => `:${s.port} ${fmt.calls(s.scriptCallsPerResponse)}, ${fmt.us(s.cpuPerReq)}`)
                    .join('; ')
                : ''),
          ),
          '',
        ]
      : []),
    ...(workersLines(results).length
      ? [
          '## workers: 2',
          '',
          ...workersLines(results),
          '',
          meta.pinning.pinned && meta.pinning.cpus === 2
            ? 'Both workers (and the primary) share the one CPU of the server under test: on this ' +
              '2-CPU machine this measures what a request costs in a worker, not how tollgate scales ' +
              'with workers.'
            : 'Unpinned, the workers compete with everything else for the machine’s CPUs.',
          '',
        ]
      : []),
    ...profileSection(profiles),
    ...(notes.length ? ['## Notes', '', ...notes.map((n) => `- ${n}`), ''] : []),
  ].join('\n');
}

/** Formats with the repository's prettier settings when prettier is there, so `prettier --check` passes. */
export async function formatted(text, file) {
  try {
    const prettier = await import('prettier');
    const options = (await prettier.resolveConfig(file)) ?? {};
    return await prettier.format(text, { ...options, filepath: file });
  } catch {
    return text;
  }
}

export async function writeReports(report) {
  const md = join(ROOT, 'bench', 'results.md');
  const json = join(ROOT, 'bench', 'results.json');
  await writeFile(md, await formatted(markdown(report), md));
  await writeFile(json, await formatted(JSON.stringify(report, null, 2), json));
}
