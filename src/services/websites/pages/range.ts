import type { DayRange } from '../analytics/stats-source.js';

/** The day range a statistics page shows: the `from`/`to` query, by default the last 30 days. */

export const DEFAULT_DAYS = 30;
/** The longest range one page reads (a year and a day, so a leap year's same-day span fits). */
export const MAX_DAYS = 367;

const DAY_MS = 86_400_000;
const ISO_DAY = /^\d{4}-\d{2}-\d{2}$/;

export function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Epoch ms of a valid "YYYY-MM-DD", else undefined (2026-02-30 is not a day). */
export function dayMs(day: string): number | undefined {
  if (!ISO_DAY.test(day)) return undefined;
  const ms = Date.parse(`${day}T00:00:00Z`);
  return Number.isNaN(ms) || isoDay(ms) !== day ? undefined : ms;
}

export type RangeResult = { ok: true; range: DayRange } | { ok: false; error: string; range: DayRange };

/**
 * The range of the query at `nowMs`. A missing bound takes its default (to: today, from: 29 days
 * before `to`); a malformed or reversed one, or a span over MAX_DAYS, is an error with the default
 * range to show beside it.
 */
export function parseRange(query: { from?: unknown; to?: unknown }, nowMs: number): RangeResult {
  const today = isoDay(nowMs);
  const fallback = { from: isoDay(dayMs(today)! - (DEFAULT_DAYS - 1) * DAY_MS), to: today };
  const given = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const fromText = given(query.from);
  const toText = given(query.to);
  const to = toText === undefined ? dayMs(today)! : dayMs(toText);
  if (to === undefined)
    return { ok: false, error: 'The end date must be a date (YYYY-MM-DD).', range: fallback };
  const from = fromText === undefined ? to - (DEFAULT_DAYS - 1) * DAY_MS : dayMs(fromText);
  if (from === undefined)
    return { ok: false, error: 'The start date must be a date (YYYY-MM-DD).', range: fallback };
  if (from > to)
    return { ok: false, error: 'The start date must not be after the end date.', range: fallback };
  if ((to - from) / DAY_MS + 1 > MAX_DAYS)
    return { ok: false, error: `A range may span at most ${MAX_DAYS} days.`, range: fallback };
  return { ok: true, range: { from: isoDay(from), to: isoDay(to) } };
}
