import { banReplyCount, pushBanArgs, readBanReply } from './ban-script.js';
import { readRun, RUN_MARK, runLengths, runReplyCount } from './batch-window-runs.js';
import {
  scriptAlgorithmResult,
  scriptWindowResult,
  type WindowRequest,
  type WindowResult,
} from './window-store.js';

// The batch script's arguments and reply; the script itself: batch-window-lua.ts.
export { BATCH_WINDOW_LUA } from './batch-window-lua.js';

/** One request's windows, as the batch script takes them. */
export type BatchedRequest = readonly WindowRequest[];

/** The script's mode of a window: fixed '1'/'0', sliding 's1'/'s0', token bucket 'b1'/'b0'. */
const modeOf = (w: WindowRequest): string =>
  w.algorithm === undefined
    ? w.enforce
      ? '1'
      : '0'
    : (w.algorithm === 'sliding' ? 's' : 'b') + (w.enforce ? '1' : '0');

/** A window spec of one call: sent once, however many requests of the batch share it. */
interface Spec {
  readonly number: number;
  readonly limit: number;
  readonly periodMs: number;
  readonly mode: string;
  readonly cost: number;
  readonly rate: number | undefined;
}

/**
 * The batch script's key count, then its KEYS and ARGV (see BATCH_WINDOW_LUA): each distinct
 * window spec once (its key in KEYS, the rest in ARGV), then each request as the numbers of its
 * specs (one value for a request of one window), a run of n identical requests as RUN_MARK + n
 * and the request once (`runs`: runLengths of the batch, or noRuns). `nowMs`: the time the script counts
 * sliding windows and token buckets at; absent, Redis' own clock (the gateway never passes it).
 */
export function batchScriptArgs(
  batch: readonly BatchedRequest[],
  nowMs?: number,
  runs: readonly number[] = runLengths(batch),
): [number, ...(string | number)[]] {
  const keys: string[] = [];
  const specsOf = new Map<string, Spec[]>(); // by key
  const specArgs: (number | string)[] = [];
  const requestArgs: (number | string)[] = [];
  let count = 0;
  const specNumber = (w: WindowRequest): number => {
    const mode = modeOf(w);
    const cost = w.cost ?? 1;
    let specs = specsOf.get(w.key);
    if (specs === undefined) specsOf.set(w.key, (specs = []));
    else
      for (const s of specs)
        if (
          s.limit === w.limit &&
          s.periodMs === w.periodMs &&
          s.mode === mode &&
          s.cost === cost &&
          s.rate === w.rate
        )
          return s.number;
    specs.push({ number: ++count, limit: w.limit, periodMs: w.periodMs, mode, cost, rate: w.rate });
    keys.push(w.key);
    specArgs.push(w.limit, w.periodMs, mode, cost);
    if (mode[0] === 'b') specArgs.push(w.rate!);
    return count;
  };
  for (let r = 0, run = 0; run < runs.length; r += runs[run++]!) {
    const windows = batch[r]!;
    if (runs[run]! > 1) requestArgs.push(RUN_MARK + runs[run]!);
    if (windows.length === 1) {
      requestArgs.push(specNumber(windows[0]!));
      continue;
    }
    requestArgs.push(-windows.length);
    for (const w of windows) requestArgs.push(specNumber(w));
  }
  // A negative spec count tells the script that no two specs share a key.
  const ownKeys = specsOf.size === count;
  const argv = [runs.length, nowMs ?? '', ownKeys ? -count : count, ...specArgs, ...requestArgs];
  pushBanArgs(batch, keys, argv);
  return [keys.length, ...keys, ...argv];
}

/** Splits the batch script's flat reply into each request's results (`runs` as the call was sent). */
export function parseBatchReply(
  batch: readonly BatchedRequest[],
  reply: readonly unknown[],
  nowMs: number,
  runs: readonly number[] = runLengths(batch),
): WindowResult[][] {
  let expected = 0;
  for (let r = 0, run = 0; run < runs.length; r += runs[run++]!) {
    const windows = batch[r]!;
    if (runs[run]! > 1) {
      expected += runReplyCount(windows);
      continue;
    }
    expected++;
    for (const w of windows) expected += w.algorithm === undefined ? 2 : 3;
    expected += banReplyCount(windows);
  }
  if (reply.length !== expected)
    throw new Error(`batch script replied ${reply.length} values, not ${expected}`);
  const results = new Array<WindowResult[]>(batch.length);
  let at = 0;
  for (let r = 0, run = 0; run < runs.length; r += runs[run++]!) {
    if (runs[run]! > 1) {
      at = readRun(batch, r, runs[run]!, reply, at, nowMs, results);
      continue;
    }
    const windows = batch[r]!;
    const blocked = Number(reply[at++]) === 1;
    const answers = windows.map((w) => {
      const count = Number(reply[at++]);
      if (w.algorithm === undefined) return scriptWindowResult(w, count, Number(reply[at++]), blocked, nowMs);
      const resetIn = Number(reply[at++]);
      return scriptAlgorithmResult(w, count, resetIn, Number(reply[at++]), blocked, nowMs);
    });
    at = readBanReply(windows, answers, reply, at, nowMs); // [bans]
    results[r] = answers;
  }
  return results;
}
