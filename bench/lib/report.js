// The bench's table and targets: on the terminal, in bench/results.md and in bench/results.json.
import { writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './processes.js';

const TARGETS = [
  {
    name: 'tollgate+Redis ≥ 0.90× bare undici forwarding',
    of: 'tollgate-redis',
    over: 'undici',
    min: 0.9,
  },
  {
    name: 'tollgate+Redis ≥ 6× the express stack',
    of: 'tollgate-redis',
    over: 'express',
    min: 6,
  },
  {
    name: '429 path ≥ 2× tollgate+Redis forwarded throughput',
    of: 'tollgate-429',
    over: 'tollgate-redis',
    min: 2,
  },
  // Ratios printed for information, with no target.
  {
    name: 'tollgate+Redis, workers: 2 / tollgate+Redis, 1 process',
    of: 'tollgate-redis-w2',
    over: 'tollgate-redis',
  },
  { name: 'tollgate+Redis, workers: 2 / nginx proxy_pass', of: 'tollgate-redis-w2', over: 'nginx' },
  { name: '429 path with / without the over-limit cache', of: 'tollgate-429', over: 'tollgate-429-nocache' },
];

export function checkTargets(results) {
  const byId = new Map(results.map((r) => [r.id, r]));
  return TARGETS.map((t) => {
    const a = byId.get(t.of);
    const b = byId.get(t.over);
    if (!a || !b) return { ...t, ratio: undefined, met: undefined };
    const ratio = a.rps / b.rps;
    return { ...t, ratio, met: t.min === undefined ? undefined : ratio >= t.min };
  });
}

const fmt = {
  rps: (n) => Math.round(n).toLocaleString('en-US'),
  ms: (n) => (n === undefined ? 'n/a' : String(Math.round(n * 100) / 100)),
  ratio: (n) => (n === undefined ? 'n/a' : `${n.toFixed(2)}×`),
};

function rows(results) {
  return results.map((r) => [
    `${r.id}: ${r.label}`,
    fmt.rps(r.rps),
    fmt.ms(r.p50),
    fmt.ms(r.p99),
    fmt.ratio(r.ratio),
    `${r.unexpected}/${r.responses}`,
    String(r.errors),
  ]);
}

const HEADER = [
  'scenario',
  'req/s',
  'p50 ms',
  'p99 ms',
  'vs bare undici',
  'unexpected status / responses',
  'errors',
];

function targetLine(t) {
  if (t.min === undefined) return `${t.name}: ${t.ratio === undefined ? 'not measured' : fmt.ratio(t.ratio)}`;
  const verdict = t.met === undefined ? 'not measured' : t.met ? 'MET' : 'NOT MET';
  const measured = t.ratio === undefined ? '' : ` (measured ${t.ratio.toFixed(2)}×)`;
  return `${t.name}: ${verdict}${measured}`;
}

function notes(results) {
  const out = [];
  for (const r of results) {
    if (r.unexpected > 0) {
      out.push(`${r.id}: status codes ${JSON.stringify(r.statusCodes)} (expected ${r.expect} only)`);
    }
    if (r.errors > 0) out.push(`${r.id}: ${r.errors} errors (${r.timeouts} timeouts, ${r.resets} resets)`);
    if (r.counted !== undefined) {
      out.push(
        `${r.id}: the Redis counter grew by ${r.counted} during a run that got ${r.responses} responses`,
      );
    }
    for (const l of r.logs) out.push(`${r.id}: the gateway logged ${l.count}× "${l.key}"`);
    if (r.rounds && r.rounds.length > 1) {
      out.push(
        `${r.id}: req/s of each round ${r.rounds.map((n) => Math.round(n)).join(', ')} (median shown)`,
      );
    }
  }
  return out;
}

export function printReport(results, targets, meta) {
  const table = [HEADER, ...rows(results)];
  const widths = HEADER.map((_, i) => Math.max(...table.map((row) => row[i].length)));
  const line = (row) =>
    row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  console.log('');
  console.log(line(HEADER));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of table.slice(1)) console.log(line(row));
  console.log('');
  console.log(
    `${meta.connections} connections, ${meta.warmup} s warm-up + ${meta.duration} s measured, ` +
      `median of ${meta.rounds} round(s); tollgate with LOG_LEVEL=warn`,
  );
  console.log('');
  console.log('targets:');
  for (const t of targets) console.log(`  ${targetLine(t)}`);
  const n = notes(results);
  if (n.length) {
    console.log('');
    console.log('notes:');
    for (const note of n) console.log(`  ${note}`);
  }
  console.log('');
}

function markdown(results, targets, meta) {
  const cell = (s) => s.replace(/\|/g, '\\|');
  const table = [
    `| ${HEADER.join(' | ')} |`,
    `| ${HEADER.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`,
    ...rows(results).map((row) => `| ${row.map(cell).join(' | ')} |`),
  ];
  const cpu = cpus();
  return [
    '# Benchmark results',
    '',
    `Measured by \`npm run bench\` on ${meta.date.slice(0, 10)}: Node ${meta.node}, ` +
      `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'} (load average before the run ${meta.load}), ` +
      `${meta.connections} connections, ${meta.warmup} s warm-up then ${meta.duration} s measured per scenario` +
      (meta.rounds > 1 ? `, median of ${meta.rounds} rounds` : '') +
      '.',
    '',
    'Each server runs in its own process; autocannon runs in the bench process on the same machine, ' +
      'so the load generator, the server under test, the upstream and Redis share its cores. ' +
      'Every request is a POST with a small JSON body, answered 200 by one local node:http upstream. ' +
      'tollgate runs with `LOG_LEVEL=warn`; its limiter (1e9 an hour, keyed by IP) counts every request. ' +
      'The 429 scenario floods a route limited to 1 an hour. The express stack and http-proxy forward ' +
      'over a keep-alive agent, and the express stack uses ioredis with auto-pipelining, as tollgate does.',
    '',
    ...table,
    '',
    '## Targets',
    '',
    ...targets.map((t) => `- ${targetLine(t)}`),
    '',
    ...(notes(results).length ? ['## Notes', '', ...notes(results).map((n) => `- ${n}`), ''] : []),
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

export async function writeReports(results, targets, meta) {
  const md = join(ROOT, 'bench', 'results.md');
  const json = join(ROOT, 'bench', 'results.json');
  await writeFile(md, await formatted(markdown(results, targets, meta), md));
  await writeFile(json, await formatted(JSON.stringify({ meta, results, targets }, null, 2), json));
}
