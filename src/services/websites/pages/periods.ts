import type { DayRange } from '../analytics/stats-source.js';
import { dayMs, isoDay } from './range.js';

/** The date presets of the range form and the previous period a range is compared with: pure. */

const DAY_MS = 86_400_000;

export interface Preset {
  readonly label: string;
  readonly range: DayRange;
}

/** Today, 7 days, 30 days, this month and 12 months (this month and the 11 before), each ending today (UTC). */
export function presets(today: string): readonly Preset[] {
  const end = dayMs(today)!;
  const back = (days: number) => isoDay(end - (days - 1) * DAY_MS);
  const [year, month] = today.split('-').map(Number) as [number, number];
  const first = (y: number, m: number) => isoDay(Date.UTC(y, m - 1, 1));
  return [
    { label: 'Today', range: { from: today, to: today } },
    { label: '7 days', range: { from: back(7), to: today } },
    { label: '30 days', range: { from: back(30), to: today } },
    { label: 'This month', range: { from: first(year, month), to: today } },
    { label: '12 months', range: { from: first(year, month - 11), to: today } },
  ];
}

/** How many days the range spans, both ends included. */
export function rangeDays(range: DayRange): number {
  return (dayMs(range.to)! - dayMs(range.from)!) / DAY_MS + 1;
}

/** The period of the same length that ends the day before the range starts. */
export function previousRange(range: DayRange): DayRange {
  const start = dayMs(range.from)!;
  return { from: isoDay(start - rangeDays(range) * DAY_MS), to: isoDay(start - DAY_MS) };
}

/**
 * The change of a figure against the previous period, as shown: "+25%", "−20%", "0%"; "new" when
 * there was nothing before.
 */
export function changeText(current: number, previous: number): string {
  if (previous === 0) return current === 0 ? '0%' : 'new';
  const percent = Math.round((100 * (current - previous)) / previous);
  if (percent === 0) return '0%';
  return percent > 0 ? `+${percent}%` : `\u2212${-percent}%`;
}

/** Whether the change reads as a rise, a fall or neither (for its colour and arrow). */
export function changeDirection(current: number, previous: number): 'up' | 'down' | 'same' {
  return current > previous ? 'up' : current < previous ? 'down' : 'same';
}
