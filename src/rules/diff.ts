/**
 * What a reload changed, for its log line: the limiters and routes added, removed and changed,
 * each described as `tollgate check` would (limits, keys, paths, upstream). Pure: two rule tables in,
 * a plain object out.
 */
import type { CompiledLimiter, CompiledRoute, CompiledWindow } from './model.js';

export interface Changed {
  readonly name: string;
  readonly from: string;
  readonly to: string;
}

export interface Changes {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly Changed[];
}

export interface RuleDiff {
  readonly limiters: Changes;
  readonly routes: Changes;
}

const PERIODS: readonly [number, string][] = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'm'],
  [1000, 's'],
];

/** A period as written: 1m, 90s, 1d, 1500ms. */
export function periodText(ms: number): string {
  for (const [unit, name] of PERIODS) if (ms % unit === 0) return `${ms / unit}${name}`;
  return `${ms}ms`;
}

const windowText = (w: CompiledWindow): string => {
  const algorithm =
    w.algorithm === 'fixed' ? '' : w.algorithm === 'sliding' ? ' sliding' : ` token-bucket(${w.burst})`;
  return `${w.limit}/${periodText(w.periodMs)}${algorithm}${w.parts.length ? ` by ${w.parts.join('+')}` : ''}`;
};

/** A limiter in one line: its windows, then what else it does differently from the defaults. */
export function limiterText(l: CompiledLimiter): string {
  const flags = [
    l.shadow ? 'shadow' : '',
    `on store error: ${l.onStoreError}`,
    l.limitedBody === 'problem' ? 'problem+json' : '',
    l.overLimitCache ? '' : 'no over-limit cache',
    l.descriptors.length ? `${l.descriptors.length} descriptor(s)` : '',
  ].filter(Boolean);
  return `${l.windows.map(windowText).join(', ')} (${flags.join(', ')}); message: ${l.message}`;
}

/** A route in one line: methods, paths, hosts, upstream, limiters. */
export function routeText(r: CompiledRoute): string {
  const hosts = r.hosts.includes('*') ? '' : ` on ${r.hosts.join(',')}`;
  const limiters = r.limiters.length ? r.limiters.map((l) => l.name).join(', ') : 'none';
  return `${r.methods.join(',')} ${r.paths.join(' ')}${hosts} -> ${r.upstream} [limiters: ${limiters}]`;
}

function changes<T>(
  before: ReadonlyMap<string, T>,
  after: ReadonlyMap<string, T>,
  text: (item: T) => string,
): Changes {
  const added = [...after.keys()].filter((n) => !before.has(n));
  const removed = [...before.keys()].filter((n) => !after.has(n));
  const changed: Changed[] = [];
  for (const [name, item] of after) {
    const old = before.get(name);
    if (old === undefined) continue;
    const from = text(old);
    const to = text(item);
    if (from !== to) changed.push({ name, from, to });
  }
  return { added, removed, changed };
}

const byName = (routes: readonly CompiledRoute[]) => new Map(routes.map((r) => [r.name, r]));

/** The difference between two rule tables (limiters by name, routes by name). */
export function diffRules(
  before: {
    readonly limiters: ReadonlyMap<string, CompiledLimiter>;
    readonly routes: readonly CompiledRoute[];
  },
  after: {
    readonly limiters: ReadonlyMap<string, CompiledLimiter>;
    readonly routes: readonly CompiledRoute[];
  },
): RuleDiff {
  return {
    limiters: changes(before.limiters, after.limiters, limiterText),
    routes: changes(byName(before.routes), byName(after.routes), routeText),
  };
}
