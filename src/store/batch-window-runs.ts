import {
  bucketResetAt,
  bucketRetryAt,
  bucketSpend,
  bucketUsed,
} from '../limits/window-maths/token-bucket.js';
import { slidingResetAt, slidingRetryAt, slidingUsed } from '../limits/window-maths/sliding.js';
import {
  scriptAlgorithmResult,
  scriptWindowResult,
  type WindowRequest,
  type WindowResult,
} from './window-store.js';

/**
 * Runs of identical requests in a batch (one client's requests of one turn, mostly): the batch
 * script decides a run in one step and answers it with how many of its requests it counted and
 * its windows' state before, and each request's answer is derived here with the same window
 * maths. A run's requests have the same windows (keys, limits, periods, modes, costs, rates), on
 * keys of their own (two windows of a request on one key see each other's hits) and no ban (a ban
 * answers per request).
 */

const sameWindow = (a: WindowRequest, b: WindowRequest): boolean =>
  a === b ||
  (a.key === b.key &&
    a.limit === b.limit &&
    a.periodMs === b.periodMs &&
    a.enforce === b.enforce &&
    a.algorithm === b.algorithm &&
    (a.cost ?? 1) === (b.cost ?? 1) &&
    a.rate === b.rate &&
    b.ban === undefined);

/** Whether a request may be part of a run: no ban, each window on a key of its own. */
function runnable(windows: readonly WindowRequest[]): boolean {
  for (let i = 0; i < windows.length; i++) {
    if (windows[i]!.ban !== undefined) return false;
    for (let j = 0; j < i; j++) if (windows[j]!.key === windows[i]!.key) return false;
  }
  return true;
}

/**
 * An entry of the batch script's ARGV at or above this marks a run of (the value - RUN_MARK)
 * requests (spec numbers never come near it): a number, so the script reads every entry with one
 * conversion.
 */
export const RUN_MARK = 2 ** 24;

/** The batch cut into runs of identical requests, in order: each run's length (1: a request alone). */
export function runLengths(batch: readonly (readonly WindowRequest[])[]): number[] {
  const runs: number[] = [];
  let last = 0; // the length of the run open at the end of `runs`
  for (let r = 0; r < batch.length; r++) {
    const windows = batch[r]!;
    if (last > 0 && sameRequest(batch[r - 1]!, windows)) {
      runs[runs.length - 1] = ++last;
      continue;
    }
    runs.push(1);
    last = runnable(windows) ? 1 : 0;
  }
  return runs;
}

function sameRequest(a: readonly WindowRequest[], b: readonly WindowRequest[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!sameWindow(a[i]!, b[i]!)) return false;
  return true;
}

/** Every request alone: the batch as the script decided it before runs (tests compare the two). */
export const noRuns = (batch: readonly unknown[]): number[] => batch.map(() => 1);

/** Reply values of a run: counted, the time, then per window its state before the run. */
export function runReplyCount(windows: readonly WindowRequest[]): number {
  let n = 2;
  for (const w of windows) n += w.algorithm === 'sliding' ? 3 : 2;
  return n;
}

/**
 * The results of a run, batch[first] to batch[first + n - 1] (identical but for what the script
 * does not see, like a calendar window's end), from the script's reply at `at`, into `into`;
 * returns the reply position after the run. The first `counted` requests were counted: request j
 * (0-based) sees its windows after min(j + 1, counted) requests' hits, a refused one after `counted`.
 */
export function readRun(
  batch: readonly (readonly WindowRequest[])[],
  first: number,
  n: number,
  reply: readonly unknown[],
  at: number,
  nowMs: number,
  into: WindowResult[][],
): number {
  const counted = Number(reply[at]);
  const redisNow = Number(reply[at + 1]);
  at += 2;
  for (let j = first; j < first + n; j++) into[j] = new Array<WindowResult>(batch[j]!.length);
  const windows = batch[first]!;
  for (let i = 0; i < windows.length; i++) {
    const w = windows[i]!;
    const cost = w.cost ?? 1;
    const p = w.periodMs;
    const x = Number(reply[at++]);
    const y = Number(reply[at++]);
    if (w.algorithm === undefined) {
      for (let j = 0; j < n; j++) {
        const hits = j < counted ? j + 1 : counted;
        // As the script's INCRBY and PEXPIRE: a new key (or one without expiry) lives a period.
        let ttl = hits > 0 && (x === 0 || y < 0) ? p : y;
        if (ttl < 0) ttl = p;
        into[first + j]![i] = scriptWindowResult(
          batch[first + j]![i]!,
          x + hits * cost,
          ttl,
          j >= counted,
          nowMs,
        );
      }
    } else if (w.algorithm === 'sliding') {
      const previous = Number(reply[at++]);
      for (let j = 0; j < n; j++) {
        const hits = j < counted ? j + 1 : counted;
        const s = { window: x, current: y + hits * cost, previous };
        into[first + j]![i] = scriptAlgorithmResult(
          batch[first + j]![i]!,
          slidingUsed(s, redisNow, p),
          slidingResetAt(s, redisNow, p) - redisNow,
          slidingRetryAt(s, redisNow, p, w.limit, cost) - redisNow,
          j >= counted,
          nowMs,
        );
      }
    } else {
      const rate = w.rate!;
      for (let j = 0; j < n; j++) {
        const hits = j < counted ? j + 1 : counted;
        const b = bucketSpend({ tat: x, frac: y }, p, rate, hits * cost);
        into[first + j]![i] = scriptAlgorithmResult(
          batch[first + j]![i]!,
          bucketUsed(b, redisNow, p, rate, w.limit),
          bucketResetAt(b, redisNow) - redisNow,
          bucketRetryAt(b, redisNow, p, rate, w.limit, cost) - redisNow,
          j >= counted,
          nowMs,
        );
      }
    }
  }
  return at;
}
