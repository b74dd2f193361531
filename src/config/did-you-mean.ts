/**
 * "Did you mean …" for config errors. No edit-distance package is a dependency (those in
 * node_modules come in transitively), so this is the optimal-string-alignment distance: Levenshtein
 * plus the swap of two neighbours ("lmiit" is one edit from "limit", not two).
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidate closest to `value` (case-insensitively), when it is close enough to be a typo: at
 * most a third of the longer word's letters apart (at least 1, at most 3). Ties go to the first.
 */
export function didYouMean(value: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const v = value.toLowerCase();
  for (const c of candidates) {
    const distance = editDistance(v, c.toLowerCase());
    const allowed = Math.min(3, Math.max(1, Math.floor(Math.max(v.length, c.length) / 3)));
    if (distance <= allowed && distance < bestDistance) {
      best = c;
      bestDistance = distance;
    }
  }
  return best;
}

/** "; did you mean x?" when some candidate is close, else "". */
export const suggestion = (value: string, candidates: readonly string[]): string => {
  const best = didYouMean(value, candidates);
  return best === undefined ? '' : `; did you mean ${best}?`;
};
