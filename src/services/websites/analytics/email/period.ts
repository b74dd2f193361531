import { addDays, dayOf, dayStart } from '../days.js';
import type { DayRange } from '../stats-source.js';

/** The report periods, in UTC: pure. */

export type Frequency = 'daily' | 'weekly' | 'monthly';

export interface ReportPeriod extends DayRange {
  /** Unique per frequency and period: what is recorded as sent ("weekly:2026-11-16"). */
  readonly key: string;
}

/** The last period that has ended by `nowMs`: yesterday, last week (Monday to Sunday), or last month. */
export function lastCompletePeriod(frequency: Frequency, nowMs: number): ReportPeriod {
  const today = dayOf(nowMs);
  let from: string;
  let to: string;
  if (frequency === 'daily') {
    from = to = addDays(today, -1);
  } else if (frequency === 'weekly') {
    // getUTCDay: 0 = Sunday. This week's Monday, then the week before it.
    const weekday = (new Date(dayStart(today)!).getUTCDay() + 6) % 7;
    from = addDays(today, -weekday - 7);
    to = addDays(from, 6);
  } else {
    const firstOfMonth = `${today.slice(0, 8)}01`;
    to = addDays(firstOfMonth, -1);
    from = `${to.slice(0, 8)}01`;
  }
  return { key: `${frequency}:${from}`, from, to };
}
