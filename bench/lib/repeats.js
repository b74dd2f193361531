// BENCH_REPEAT=N: the whole set of rounds is run N times, and each scenario's ratios (and each
// target's) are taken per repeat, so a report can say how far they move between runs of the same
// build. A change that moves a ratio by less than this spread is "not measurable".
const sorted = (values) => values.filter((v) => v !== undefined && Number.isFinite(v)).sort((a, b) => a - b);

/** Median, lowest and highest of some ratios (undefined when none was measured). */
export function spreadOf(values) {
  const v = sorted(values);
  if (v.length === 0) return undefined;
  const mid = Math.floor(v.length / 2);
  const median = v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  return { median, low: v[0], high: v[v.length - 1], n: v.length };
}

/** "0.91× (0.88–0.95)" for ratios, "39.3 (38.1–41.0)" with `suffix` '' and one digit; or "n/a". */
export function formatSpread(s, digits = 2, suffix = '×') {
  if (s === undefined) return 'n/a';
  const f = (n) => n.toFixed(digits);
  return `${f(s.median)}${suffix} (${f(s.low)}–${f(s.high)})`;
}

/**
 * Whether a target is met over the repeats: "MET" when even the lowest repeat meets it, "NOT MET"
 * when even the highest misses it, and "within the spread" otherwise.
 */
export function spreadVerdict(min, s) {
  if (min === undefined) return '(no target)';
  if (s === undefined) return 'not measured';
  if (s.low >= min) return 'MET';
  if (s.high < min) return 'NOT MET';
  return 'within the spread';
}
