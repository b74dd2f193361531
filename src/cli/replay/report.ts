/** What `tollgate replay` reports of one or two simulations: JSON for scripts, tables for people. */
import type { KeyPart } from '../../rules/model.js';
import { windowText } from '../describe.js';
import type { Warning } from './policies.js';
import type { LimiterStats, Simulation } from './simulate.js';

/** Each key's peak use of its limit, in these buckets (percent of the limit), or refused. */
export type PeakBucket = '0-50' | '50-80' | '80-100' | 'refused';

export const peakBucket = (k: { refused: number; peak: number }): PeakBucket =>
  k.refused > 0 ? 'refused' : k.peak < 0.5 ? '0-50' : k.peak < 0.8 ? '50-80' : '80-100';

export interface TopKey {
  readonly key: string;
  readonly requests: number;
  readonly refused: number;
  /** Peak use of the limit over its counted requests, in percent (rounded down). */
  readonly peakPercent: number;
}

export interface LimiterReport {
  readonly name: string;
  readonly shadow: boolean;
  readonly windows: string;
  readonly requests: number;
  readonly refused: number;
  readonly keys: number;
  readonly keysRefused: number;
  /** Let by uncounted (allow list, an override of unlimited); answered 403 (deny list); 429 by its ban. */
  readonly exempt: number;
  readonly denied: number;
  readonly banned: number;
  readonly bansStarted: number;
  readonly peakUse: Record<PeakBucket, number>;
  readonly topKeys: readonly TopKey[];
}

export interface RouteReport {
  readonly name: string;
  readonly limiters: readonly string[];
  readonly requests: number;
  readonly refused: number;
  readonly shadowRefused: number;
  readonly banned: number;
  readonly denied: number;
  readonly lengthRequired: number;
  /** Requests by tier, on a route whose tier is chosen (tiers or overrides); else empty. */
  readonly tiers: Record<string, number>;
}

export interface SimulationReport {
  readonly unrouted: number;
  /** Requests keyed by a part the log does not carry (keyed as a missing part), by part. */
  readonly missingKeyParts: Record<KeyPart, number>;
  /** Fields a limiter's policy needed that lines lacked, and what replay did instead. */
  readonly warnings: readonly Warning[];
  readonly routes: readonly RouteReport[];
  readonly limiters: readonly LimiterReport[];
}

export interface Change {
  readonly baseline: number | null;
  readonly candidate: number | null;
  readonly change: number;
}

export interface DiffReport {
  readonly routes: readonly { readonly name: string; readonly refused: Change }[];
  readonly limiters: readonly {
    readonly name: string;
    readonly refused: Change;
    readonly keysRefused: Change;
    /** Keys the candidate refuses and the baseline did not (same limiter name, same key). */
    readonly keysNewlyRefused: number;
    readonly keysNoLongerRefused: number;
  }[];
}

export function simulationReport(sim: Simulation, top: number): SimulationReport {
  sim.settle();
  return {
    unrouted: sim.unrouted,
    missingKeyParts: Object.fromEntries([...sim.missing].sort(([a], [b]) => a.localeCompare(b))),
    warnings: sim.warnings.list().map((w) => ({ ...w })),
    routes: [...sim.routes.values()].map((r) => ({
      name: r.route.name,
      limiters: r.route.limiters.map((l) => l.name),
      requests: r.requests,
      refused: r.refused,
      shadowRefused: r.shadowRefused,
      banned: r.banned,
      denied: r.denied,
      lengthRequired: r.lengthRequired,
      tiers: Object.fromEntries(r.tiers),
    })),
    limiters: [...sim.limiters.values()].map((l) => limiterReport(l, top)),
  };
}

function limiterReport(l: LimiterStats, top: number): LimiterReport {
  const peakUse: Record<PeakBucket, number> = { '0-50': 0, '50-80': 0, '80-100': 0, refused: 0 };
  let keysRefused = 0;
  for (const k of l.keys.values()) {
    peakUse[peakBucket(k)]++;
    if (k.refused > 0) keysRefused++;
  }
  return {
    name: l.limiter.name,
    shadow: l.limiter.shadow,
    windows: windowText(l.limiter),
    requests: l.requests,
    refused: l.refused,
    keys: l.keys.size,
    keysRefused,
    exempt: l.exempt,
    denied: l.denied,
    banned: l.banned,
    bansStarted: l.bansStarted,
    peakUse,
    topKeys: topKeys(l, top),
  };
}

/** The heaviest keys: most refused, then highest peak, then most requests (then by key: stable). */
function topKeys(l: LimiterStats, top: number): TopKey[] {
  const heavier = (a: TopKey, b: TopKey) =>
    b.refused - a.refused ||
    b.peakPercent - a.peakPercent ||
    b.requests - a.requests ||
    (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  const best: TopKey[] = [];
  if (top === 0) return best;
  for (const [values, k] of l.keys) {
    const entry = {
      key: values,
      requests: k.requests,
      refused: k.refused,
      peakPercent: Math.floor(k.peak * 100),
    };
    if (best.length === top && heavier(entry, best[top - 1]!) >= 0) continue;
    best.push(entry);
    best.sort(heavier);
    if (best.length > top) best.pop();
  }
  // Named only now: a key is its values; the report says whose.
  return best.map((e) => ({
    ...e,
    key: e.key
      .split(' ')
      .map((v, i) => `${l.parts[i]}=${v}`)
      .join(' '),
  }));
}

const change = (baseline: number | undefined, candidate: number | undefined): Change => ({
  baseline: baseline ?? null,
  candidate: candidate ?? null,
  change: (candidate ?? 0) - (baseline ?? 0),
});

/** Names in the candidate's order, then the baseline's own. */
const names = <T extends { name: string }>(c: readonly T[], b: readonly T[]) => [
  ...new Set([...c.map((x) => x.name), ...b.map((x) => x.name)]),
];

export function diffReport(
  candidate: SimulationReport,
  baseline: SimulationReport,
  candidateSim: Simulation,
  baselineSim: Simulation,
): DiffReport {
  const routes = names(candidate.routes, baseline.routes).map((name) => ({
    name,
    refused: change(
      baseline.routes.find((r) => r.name === name)?.refused,
      candidate.routes.find((r) => r.name === name)?.refused,
    ),
  }));
  const limiters = names(candidate.limiters, baseline.limiters).map((name) => {
    const c = candidate.limiters.find((l) => l.name === name);
    const b = baseline.limiters.find((l) => l.name === name);
    const cKeys = candidateSim.limiters.get(name)?.keys;
    const bKeys = baselineSim.limiters.get(name)?.keys;
    let keysNewlyRefused = 0;
    let keysNoLongerRefused = 0;
    for (const [key, k] of cKeys ?? [])
      if (k.refused > 0 && !(bKeys?.get(key)?.refused ?? 0)) keysNewlyRefused++;
    for (const [key, k] of bKeys ?? [])
      if (k.refused > 0 && !(cKeys?.get(key)?.refused ?? 0)) keysNoLongerRefused++;
    return {
      name,
      refused: change(b?.refused, c?.refused),
      keysRefused: change(b?.keysRefused, c?.keysRefused),
      keysNewlyRefused,
      keysNoLongerRefused,
    };
  });
  return { routes, limiters };
}
