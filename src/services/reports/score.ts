import type { CheckResult, Importance } from './checks/types.js';

export type ReportResult = 'good' | 'decent' | 'bad';
export const REPORT_RESULTS: readonly ReportResult[] = ['good', 'decent', 'bad'];

/** How much a check counts towards the score. */
export const WEIGHTS: Record<Importance, number> = { high: 3, medium: 2, low: 1 };

/** The weighted share of passed checks, 0–100 (rounded). */
export function score(results: Record<string, CheckResult>): number {
  let total = 0;
  let passed = 0;
  for (const r of Object.values(results)) {
    total += WEIGHTS[r.importance];
    if (r.passed) passed += WEIGHTS[r.importance];
  }
  return total === 0 ? 0 : Math.round((100 * passed) / total);
}

/** good above 79, decent 49–79, bad below 49 (the originals' thresholds). */
export function resultFor(score: number): ReportResult {
  if (score > 79) return 'good';
  if (score >= 49) return 'decent';
  return 'bad';
}
