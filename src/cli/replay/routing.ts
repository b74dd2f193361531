/** What replay reads of a line to route it, once for both configs where it can. */
import { matchPathOf as targetMatchPath } from '../../routing/request-target.js';
import type { CompiledRoute } from '../../rules/compile.js';

/** The last target canonicalised, and its match path: a line both simulations replay is canonicalised once. */
let lastTarget = '/';
let lastMatchPath = targetMatchPath(lastTarget);

export function matchPathOf(target: string): string {
  if (target !== lastTarget) {
    lastMatchPath = targetMatchPath(target);
    lastTarget = target;
  }
  return lastMatchPath;
}

/** The same strings in the same order. */
export const sameList = (x: readonly string[], y: readonly string[]): boolean =>
  x.length === y.length && x.every((v, i) => v === y[i]);

/**
 * Whether two configs route every request alike: the same hosts, methods and paths, route by
 * route in the same order (all the router reads), so a line's route index serves both.
 */
export const sameRouting = (a: readonly CompiledRoute[], b: readonly CompiledRoute[]): boolean =>
  a.length === b.length &&
  a.every(
    (r, i) =>
      sameList(r.hosts, b[i]!.hosts) && sameList(r.methods, b[i]!.methods) && sameList(r.paths, b[i]!.paths),
  );
