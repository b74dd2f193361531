import { isAscii } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { OverrideTable } from '../limits/overrides.js';
import { loadConfigFile } from '../rules/load.js';
import type { RuleTable } from '../rules/compile.js';
import { LineRecord, readLine, type LogFormat } from './replay/log-formats.js';
import { diffReport, simulationReport, type DiffReport, type SimulationReport } from './replay/report.js';
import { diffText, simulationText } from './replay/report-text.js';
import { CompactUnfit, RowData } from './replay/compact.js';
import { KeyLevels } from './replay/client-keys.js';
import { Simulation, type SimulationOptions } from './replay/simulate.js';
import { readOverridesFile } from './overrides-file.js';
import { UsageError } from './usage-error.js';

/** Bad lines shown with their place; the rest are only counted. */
const BAD_EXAMPLES = 5;

export interface ReplayOptions {
  readonly config: string;
  readonly baseline: string | undefined;
  readonly json: boolean;
  readonly top: number;
}

export interface InputReport {
  readonly files: readonly string[];
  readonly lines: number;
  readonly requests: number;
  /** Lines that are not requests (other log messages, blank lines). */
  readonly skipped: number;
  readonly bad: number;
  readonly badExamples: readonly { readonly file: string; readonly line: number; readonly reason: string }[];
  readonly formats: Partial<Record<LogFormat, number>>;
  readonly from: string | null;
  readonly to: string | null;
  /** Requests logged earlier than one before them: replayed at the later time (the clock never goes back). */
  readonly outOfOrder: number;
}

export interface ReplayReport {
  readonly config: string;
  readonly baselineConfig: string | null;
  readonly input: InputReport;
  readonly candidate: SimulationReport;
  readonly baseline: SimulationReport | null;
  readonly diff: DiffReport | null;
}

/** `tollgate replay`: a candidate config (and a baseline) over access logs, on the logs' own clock. */
export async function replay(options: ReplayOptions, files: readonly string[]): Promise<number> {
  if (files.length === 0) throw new UsageError('replay needs at least one LOG file');
  if (!Number.isInteger(options.top) || options.top < 0) throw new UsageError('--top must be a whole number');
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  // The compact lane first; a log it cannot stand for the store on is replayed again without it.
  let read: Read | undefined;
  let candidate: Simulation;
  let baseline: Simulation | undefined;
  // (A pipe cannot be read again: the generic path at once.)
  const rereadable = (
    await Promise.all(
      files.map((f) =>
        stat(f).then(
          (s) => s.isFile(),
          () => false,
        ),
      ),
    )
  ).every(Boolean);
  // Loaded once: a pass the compact lane gives up on is replayed by new simulations of the same.
  const candidateConfig = await loadReplayed(options.config);
  const baselineConfig = options.baseline ? await loadReplayed(options.baseline) : undefined;
  for (let compact = rereadable; ; compact = false) {
    const shared = { compact, rows: new RowData(), levels: new KeyLevels() };
    candidate = simulationOf(candidateConfig, shared);
    baseline = baselineConfig ? simulationOf(baselineConfig, shared) : undefined;
    try {
      read = await readLogs(files, candidate, baseline);
      break;
    } catch (err) {
      if (!compact || !(err instanceof CompactUnfit)) throw err;
    }
  }
  if (!read) return 1;
  const { input, badExamples, formats, first, clock } = read;
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuStarted);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  await Promise.all([candidate.close(), baseline?.close()]);
  const candidateReport = simulationReport(candidate, options.top);
  const baselineReport = baseline ? simulationReport(baseline, options.top) : null;
  const report: ReplayReport = {
    config: options.config,
    baselineConfig: options.baseline ?? null,
    input: {
      files,
      ...input,
      badExamples,
      formats,
      from: first === undefined ? null : new Date(first).toISOString(),
      to: first === undefined ? null : new Date(clock).toISOString(),
    },
    candidate: candidateReport,
    baseline: baselineReport,
    diff:
      baseline && baselineReport ? diffReport(candidateReport, baselineReport, candidate, baseline) : null,
  };
  console.log(options.json ? JSON.stringify(report, null, 2) : reportText(report));
  // The speed goes to stderr: the report itself stays the same from run to run.
  const rate = (s: number) => Math.round(input.lines / Math.max(s, 1e-9));
  console.error(
    `replayed ${input.lines} lines in ${seconds.toFixed(2)} s: ${rate(seconds)} lines/s, ` +
      `${rate(cpuSeconds)} lines per CPU second`,
  );
  return 0;
}

interface Read {
  readonly input: { lines: number; requests: number; skipped: number; bad: number; outOfOrder: number };
  readonly badExamples: { file: string; line: number; reason: string }[];
  readonly formats: Partial<Record<LogFormat, number>>;
  readonly first: number | undefined;
  readonly clock: number;
}

/** Every line of `files` fed to the simulations; undefined when a file cannot be read (said on stderr). */
async function readLogs(
  files: readonly string[],
  candidate: Simulation,
  baseline: Simulation | undefined,
): Promise<Read | undefined> {
  const input = { lines: 0, requests: 0, skipped: 0, bad: 0, outOfOrder: 0 };
  const badExamples: { file: string; line: number; reason: string }[] = [];
  const formats: Partial<Record<LogFormat, number>> = {};
  let first: number | undefined;
  let clock = -Infinity;
  // Routed once a line for both configs when they route alike (the docs' worked example does).
  const shared = baseline !== undefined && candidate.routesAs(baseline);
  // Each line's record, read into the one object (the simulations keep nothing of it).
  const rec = new LineRecord();
  for (const file of files) {
    let lineNo = 0;
    const read = forEachLine(file, (line) => {
      lineNo++;
      input.lines++;
      const format = readLine(line, rec);
      if (typeof format !== 'string') {
        if (format.kind === 'skip') input.skipped++;
        else {
          input.bad++;
          if (badExamples.length < BAD_EXAMPLES)
            badExamples.push({ file, line: lineNo, reason: format.reason });
        }
        return;
      }
      input.requests++;
      formats[format] = (formats[format] ?? 0) + 1;
      const t = rec.timeMs;
      first ??= t;
      if (t < clock) input.outOfOrder++;
      else clock = t;
      const index = candidate.routeIndex(rec);
      candidate.feed(rec, clock, index);
      baseline?.feed(rec, clock, shared ? index : undefined);
    });
    try {
      await read;
    } catch (err) {
      if (err instanceof CompactUnfit) throw err;
      console.error(`cannot read ${file}: ${(err as Error).message}`);
      return undefined;
    }
  }
  return { input, badExamples, formats, first, clock };
}

interface Replayed {
  readonly table: RuleTable;
  readonly overrides: OverrideTable | undefined;
}

/** A config and the overrides of its overrides file (the admin API's live in a store). */
async function loadReplayed(configFile: string): Promise<Replayed> {
  const table = await loadConfigFile(configFile);
  const file = table.config.tiers.overrides.file;
  return { table, overrides: file ? OverrideTable.compile(await readOverridesFile(file)) : undefined };
}

const simulationOf = (r: Replayed, options: SimulationOptions): Simulation =>
  new Simulation(r.table, r.overrides, undefined, options);

function reportText(r: ReplayReport): string {
  const i = r.input;
  const formats = Object.entries(i.formats)
    .map(([f, n]) => `${n} ${f}`)
    .join(', ');
  const out = [
    `replayed ${i.requests} requests (${formats || 'none'}) from ${i.from ?? '-'} to ${i.to ?? '-'}; ` +
      `${i.bad} bad lines, ${i.skipped} other lines` +
      (i.outOfOrder ? `, ${i.outOfOrder} out of order (replayed at the time before them)` : ''),
  ];
  for (const b of i.badExamples) out.push(`  bad line ${b.file}:${b.line}: ${b.reason}`);
  out.push('', simulationText(`candidate ${r.config}`, r.candidate));
  if (r.baseline && r.diff) {
    out.push('', simulationText(`baseline ${r.baselineConfig}`, r.baseline), '', diffText(r.diff));
  }
  return out.join('\n');
}

/** Bytes read at a time: a chunk is decoded once, its lines sliced from the one string. */
const CHUNK = 4 << 20;

/** Calls `each` with every line of a file (gunzipped when it ends in .gz), without its line end. */
async function forEachLine(file: string, each: (line: string) => void): Promise<void> {
  if (file.endsWith('.gz')) return forEachGzipLine(file, each);
  const handle = await open(file, 'r');
  try {
    let buf = Buffer.allocUnsafe(CHUNK);
    let held = 0; // bytes of a line not yet ended, at the front of buf
    for (;;) {
      if (held === buf.length) buf = Buffer.concat([buf, Buffer.allocUnsafe(buf.length)]); // a very long line
      const { bytesRead } = await handle.read(buf, held, buf.length - held, null);
      const filled = held + bytesRead;
      if (bytesRead === 0) {
        if (filled > 0) eachLine(decode(buf, filled), each, true);
        return;
      }
      // Up to the last line end: a character is never cut in two.
      const end = buf.lastIndexOf(10, filled - 1) + 1;
      if (end > 0) eachLine(decode(buf, end), each, false);
      held = filled - end;
      buf.copy(buf, 0, end, filled);
    }
  } finally {
    await handle.close();
  }
}

/** The text of buf's first `n` bytes: Latin-1 (the cheapest decoding) when they are all ASCII. */
const decode = (buf: Buffer, n: number): string =>
  isAscii(buf.subarray(0, n)) ? buf.toString('latin1', 0, n) : buf.toString('utf8', 0, n);

/** Calls `each` with each line of `text` (whole lines, but the last when `last`). */
function eachLine(text: string, each: (line: string) => void, last: boolean): void {
  let start = 0;
  for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
    each(text.slice(start, nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl));
    start = nl + 1;
  }
  if (last && start < text.length) each(text.slice(start));
}

async function forEachGzipLine(file: string, each: (line: string) => void): Promise<void> {
  const source = createReadStream(file, { highWaterMark: 1 << 20 });
  const gunzip = createGunzip({ chunkSize: 1 << 20 });
  source.on('error', (err) => gunzip.destroy(err));
  const stream: Readable = source.pipe(gunzip);
  stream.setEncoding('utf8');
  let rest = '';
  for await (const chunk of stream as AsyncIterable<string>) {
    const text = rest + chunk;
    const end = text.lastIndexOf('\n') + 1;
    eachLine(text.slice(0, end), each, false);
    rest = text.slice(end);
  }
  if (rest !== '') eachLine(rest, each, true);
}
