/**
 * How replay's compact lane (compact.ts) lays a config out: which configs it takes (none of the
 * policies that take the longer way), and per route, each window's place in its limiter's row
 * (the row: the key's requests, refusals and peak use, then each window's state: a fixed window's
 * count and reset; a sliding window's "held", index and two counts; a bucket's "held", TAT and remainder).
 */
import { hasLists } from '../../limits/exemption.js';
import type { CompiledLimiter, CompiledRoute, RuleTable } from '../../rules/compile.js';
import { sameList } from './routing.js';

export const FIXED = 0;
export const SLIDING = 1;
export const BUCKET = 2;
/** Numbers a window's state takes in a row, by kind. */
const SIZE = [2, 4, 3] as const;
/** A row starts with its key's requests, refusals and peak use. */
const STATS = 3;

/** Whether a config's routes can all take the compact lane. */
export function compactFits(table: RuleTable, overridesEmpty: boolean): boolean {
  if (!overridesEmpty) return false;
  return table.routes.every(
    (route) =>
      !route.tiered &&
      !route.charged &&
      !route.deferred &&
      !hasLists(route.limiters) &&
      route.limiters.every(
        (l) =>
          l.ban === undefined &&
          l.windows.every((w) => !w.calendar && sameList(w.parts, l.windows[0]!.parts)),
      ),
  );
}

/** A route's windows as the compact lane reads them, index by index (route.windows' order). */
export interface CompactRoute {
  /** The window's limiter, as an index into route.limiters. */
  readonly limiter: readonly number[];
  /** Where the window's state starts in its limiter's row. */
  readonly offset: readonly number[];
  readonly kind: readonly number[];
  readonly periodMs: readonly number[];
  /** The store request's limit (a bucket's burst), and a bucket's rate. */
  readonly limit: readonly number[];
  readonly rate: readonly number[];
  readonly shadow: readonly boolean[];
  /** Per limiter of the route: a row's length, and its windows' end (exclusive) in route.windows. */
  readonly rowSize: readonly number[];
  readonly end: readonly number[];
}

export function compactRoute(route: CompiledRoute): CompactRoute {
  const c = {
    limiter: [] as number[],
    offset: [] as number[],
    kind: [] as number[],
    periodMs: [] as number[],
    limit: [] as number[],
    rate: [] as number[],
    shadow: [] as boolean[],
    rowSize: route.limiters.map(rowSize),
    end: [] as number[],
  };
  route.windows.forEach(({ limiter, index, window }, i) => {
    const l = route.limiters.indexOf(limiter);
    c.limiter.push(l);
    c.offset.push(STATS + limiter.windows.slice(0, index).reduce((n, w) => n + SIZE[kindOf(w)], 0));
    c.kind.push(kindOf(window));
    c.periodMs.push(window.periodMs);
    c.limit.push(window.burst); // the store request's limit: a bucket's burst, else the limit
    c.rate.push(window.limit);
    c.shadow.push(limiter.shadow);
    c.end[l] = i + 1;
  });
  return c;
}

const kindOf = (w: { readonly algorithm: string }) =>
  w.algorithm === 'sliding' ? SLIDING : w.algorithm === 'token-bucket' ? BUCKET : FIXED;
const rowSize = (l: CompiledLimiter) => l.windows.reduce((n, w) => n + SIZE[kindOf(w)], STATS);
