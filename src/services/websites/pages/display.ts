import type { EventValue } from '../analytics/stats-source.js';

/** How the pages show stored values: pure. */

const regions = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });

/** A country's English name from its ISO 3166-1 alpha-2 code ("DE" → "Germany"); anything else as it is. */
export function countryName(code: string): string {
  if (!/^[A-Z]{2}$/.test(code)) return code;
  try {
    return regions.of(code) ?? code;
  } catch {
    return code;
  }
}

/** A count's share of the sum in whole percent, 0–100: the width class of its bar. */
export function shareStep(count: number, sum: number): number {
  if (sum <= 0) return 0;
  return Math.min(100, Math.max(0, Math.round((100 * count) / sum)));
}

/** An event value's sum with its unit ("3,950 cents"); a sum without a unit as the number alone. */
export function valueText(total: number, unit: string): string {
  const n = total.toLocaleString('en-US', { maximumFractionDigits: 2 });
  return unit === '' ? n : `${n} ${unit}`;
}

/** Event value sums by event name. */
export function valuesByName(values: readonly EventValue[]): Map<string, EventValue[]> {
  const out = new Map<string, EventValue[]>();
  for (const v of values) out.set(v.name, [...(out.get(v.name) ?? []), v]);
  return out;
}
