/**
 * What `tollgate check` warns about in a valid config: limiters no route uses, routes no request
 * can reach (an earlier route matches all of it), and windows that contradict each other (a longer
 * window whose limit is no larger than a shorter one's always refuses first). Pure.
 */
import { methodKey } from '../routing/method.js';
import { compileHost, compilePath } from '../routing/patterns.js';
import { canonicalTarget } from '../routing/request-target.js';
import { periodText } from '../rules/diff.js';
import type { CompiledRoute, RouteWindow, RuleTable } from '../rules/compile.js';

/** The warnings section of `tollgate check`'s output ("" when there is none). */
export function warningsText(table: RuleTable): string {
  const warnings = checkWarnings(table);
  return warnings.length === 0 ? '' : `\n\nwarnings:\n${warnings.map((w) => `  - ${w}`).join('\n')}`;
}

/** Every warning of a rule table, one line each. */
export function checkWarnings(table: RuleTable): string[] {
  return [...unusedLimiters(table), ...shadowedRoutes(table.routes), ...contradictingWindows(table.routes)];
}

export function unusedLimiters(table: RuleTable): string[] {
  const used = new Set(table.routes.flatMap((r) => r.limiters.map((l) => l.name)));
  const envoy = table.config.rateLimitService !== undefined;
  return [...table.limiters.values()]
    .filter((l) => !used.has(l.name) && !(envoy && l.descriptors.length > 0))
    .map((l) =>
      l.descriptors.length > 0
        ? `limiter "${l.name}" is unused: no route names it, and its descriptors need rateLimitService`
        : `limiter "${l.name}" is unused: no route names it`,
    );
}

/** Every host `outer` matches, `inner` matches too ("*", "*.example.com", exact names). */
function hostCovers(outer: string, inner: string): boolean {
  const o = outer.toLowerCase();
  const i = inner.toLowerCase();
  if (o === '*') return true;
  if (i === '*') return false;
  if (i.startsWith('*.')) return o.startsWith('*.') && i.slice(1).endsWith(o.slice(1));
  return compileHost(o)(i);
}

/** Every path `inner` matches, `outer` matches too. */
function pathCovers(outer: string, inner: string): boolean {
  if (inner.endsWith('*')) {
    if (!outer.endsWith('*')) return false;
    const prefix = (p: string) => canonicalTarget(p.slice(0, -1)).matchPath;
    return prefix(inner).startsWith(prefix(outer));
  }
  const exact = canonicalTarget(inner).matchPath.replace(/(.)\/$/, '$1');
  const matches = compilePath(outer);
  return matches(exact) && matches(exact === '/' ? exact : `${exact}/`);
}

function methodsCover(outer: readonly string[], inner: readonly string[]): boolean {
  if (outer.includes('*')) return true;
  if (inner.includes('*')) return false;
  const keys = new Set(outer.map(methodKey));
  return inner.every((m) => keys.has(methodKey(m)));
}

/** True when every request `later` matches is taken by `earlier` first. */
export function routeCovers(earlier: CompiledRoute, later: CompiledRoute): boolean {
  return (
    later.hosts.every((h) => earlier.hosts.some((o) => hostCovers(o, h))) &&
    methodsCover(earlier.methods, later.methods) &&
    later.paths.every((p) => earlier.paths.some((o) => pathCovers(o, p)))
  );
}

export function shadowedRoutes(routes: readonly CompiledRoute[]): string[] {
  const out: string[] = [];
  routes.forEach((route, j) => {
    const by = routes.slice(0, j).find((earlier) => routeCovers(earlier, route));
    if (by)
      out.push(`route "${route.name}" is unreachable: route "${by.name}" before it matches all its requests`);
  });
  return out;
}

const text = (w: RouteWindow) =>
  `${w.window.limit}/${periodText(w.window.periodMs)} by ${w.window.parts.join('+')}`;

/**
 * `short` can never refuse when a longer window counting the same requests or more (its key parts
 * a subset of short's) allows no more: it is spent first. Token buckets (bursts) are left out.
 */
function unreachable(short: RouteWindow, long: RouteWindow): boolean {
  const s = short.window;
  const l = long.window;
  if (s.algorithm === 'token-bucket' || l.algorithm === 'token-bucket') return false;
  return l.periodMs > s.periodMs && l.limit <= s.limit && l.parts.every((p) => s.parts.includes(p));
}

export function contradictingWindows(routes: readonly CompiledRoute[]): string[] {
  const seen = new Set<string>();
  for (const route of routes) {
    const enforced = route.windows.filter((w) => !w.limiter.shadow);
    for (const short of enforced) {
      for (const long of enforced) {
        if (short === long || !unreachable(short, long)) continue;
        seen.add(
          `windows contradict: ${short.policyName} (${text(short)}) can never refuse, ` +
            `${long.policyName} (${text(long)}) is spent first`,
        );
      }
    }
  }
  return [...seen];
}
