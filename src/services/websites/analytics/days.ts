/** UTC calendar days as "YYYY-MM-DD": pure helpers shared by the stats source, the API and the reports. */

const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The UTC day of an instant. */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** Epoch ms of a day's midnight (UTC); undefined when `day` is not a real calendar date. */
export function dayStart(day: string): number | undefined {
  const m = DATE.exec(day);
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return Number.isFinite(ms) && dayOf(ms) === day ? ms : undefined;
}

/** The day `n` days after `day` (before, when negative). */
export const addDays = (day: string, n: number): string => dayOf(dayStart(day)! + n * DAY_MS);

/** Every day from `from` to `to`, inclusive; empty when from > to. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  const end = dayStart(to)!;
  for (let ms = dayStart(from)!; ms <= end; ms += DAY_MS) days.push(dayOf(ms));
  return days;
}

/** Number of days in an inclusive range. */
export const rangeLength = (from: string, to: string): number =>
  Math.round((dayStart(to)! - dayStart(from)!) / DAY_MS) + 1;
