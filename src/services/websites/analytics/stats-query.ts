import type { FieldErrors } from '../../kit/errors.js';
import { HttpError } from '../../kit/errors.js';
import { addDays, dayOf, dayStart, rangeLength } from './days.js';
import { RECENT_MS } from './recorder.js';
import { DIMENSIONS, type DayRange, type Dimension } from './stats-source.js';

/** The stats API's query, read as the original reads it: pure, unit-testable. */

export const SERIES = ['visitors', 'pageviews', 'visitors_hours', 'pageviews_hours'] as const;
export type Series = (typeof SERIES)[number];
/** The visits of the last minutes (the recent visits, kept RECENT_MS), newest first. */
export const REALTIME = 'realtime';
export const STAT_NAMES: readonly string[] = [...SERIES, ...DIMENSIONS, REALTIME];
/** How far name=realtime looks back, in minutes: at most as long as the recent visits are kept. */
export const REALTIME_MINUTES = { min: 1, max: RECENT_MS / 60_000, default: RECENT_MS / 60_000 } as const;

export const STATS_PER_PAGE = { min: 10, max: 100, default: 10 } as const;
/** The default range: the last 30 days, today included. */
export const DEFAULT_DAYS = 30;
/** The longest range one request may read: a year and a day, as the statistics pages allow. */
export const MAX_RANGE_DAYS = 367;
/**
 * A time series (visitors, pageviews, and their _hours) comes whole by default, as in the
 * original: one row per day of the range, or the 24 hours. per_page may then go up to a whole
 * range, so that every link of its answer reads back the same.
 */
export const SERIES_PER_PAGE = { min: STATS_PER_PAGE.min, max: MAX_RANGE_DAYS } as const;
export const HOURS = 24;

export interface StatsQuery {
  readonly name: Series | Dimension | typeof REALTIME;
  readonly range: DayRange;
  readonly search?: string;
  readonly sort: 'max' | 'min';
  readonly perPage: number;
  /** name=realtime only: how many minutes back. */
  readonly minutes?: number;
}

const one = (value: unknown): unknown => (Array.isArray(value) ? value : value === '' ? undefined : value);

export function parseStatsQuery(raw: unknown, nowMs: number): StatsQuery {
  const q = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  const errors: FieldErrors = {};
  const name = one(q.name);
  if (name === undefined) errors.name = ['The name field is required.'];
  else if (typeof name !== 'string' || !STAT_NAMES.includes(name))
    errors.name = ['The selected name is invalid.'];

  const date = (field: 'from' | 'to'): string | undefined => {
    const value = one(q[field]);
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || dayStart(value) === undefined) {
      errors[field] = [`The ${field} field must match the format Y-m-d.`];
      return undefined;
    }
    return value;
  };
  const today = dayOf(nowMs);
  const givenFrom = date('from');
  const givenTo = date('to');
  const to = givenTo ?? (givenFrom !== undefined && givenFrom > today ? givenFrom : today);
  const from = givenFrom ?? addDays(to, -(DEFAULT_DAYS - 1));
  if (!errors.from && !errors.to) {
    if (from > to) errors.to = ['The to field must be a date after or equal to from.'];
    else if (rangeLength(from, to) > MAX_RANGE_DAYS) {
      errors.from = [`The range must not be longer than ${MAX_RANGE_DAYS} days.`];
    }
  }

  const search = one(q.search);
  if (search !== undefined && typeof search !== 'string')
    errors.search = ['The search field must be a string.'];
  else if (typeof search === 'string' && search.length > 255) {
    errors.search = ['The search field must not be greater than 255 characters.'];
  }
  let minutes: number | undefined;
  if (name === REALTIME) {
    const given = one(q.minutes);
    minutes = given === undefined ? REALTIME_MINUTES.default : realtimeMinutes(given);
    if (minutes === undefined) {
      errors.minutes = [
        `The minutes field must be an integer between ${REALTIME_MINUTES.min} and ${REALTIME_MINUTES.max}.`,
      ];
    }
  }
  if (Object.keys(errors).length > 0) throw HttpError.validation(errors);

  // As the original: an unknown sort or an out-of-range per_page is the default, not an error.
  const sort = q.sort === 'min' ? 'min' : 'max';
  const n = typeof q.per_page === 'string' && /^\d{1,4}$/.test(q.per_page) ? Number(q.per_page) : NaN;
  const perPage = SERIES.includes(name as Series)
    ? seriesPerPage(n, (name as string).endsWith('_hours') ? HOURS : rangeLength(from, to))
    : n >= STATS_PER_PAGE.min && n <= STATS_PER_PAGE.max
      ? n
      : STATS_PER_PAGE.default;
  return {
    name: name as StatsQuery['name'],
    range: { from, to },
    search: search as string | undefined,
    sort,
    perPage,
    ...(minutes === undefined ? {} : { minutes }),
  };
}

/** A series' rows per page: per_page when in SERIES_PER_PAGE, else the whole series (`rows`). */
function seriesPerPage(n: number, rows: number): number {
  return n >= SERIES_PER_PAGE.min && n <= SERIES_PER_PAGE.max ? n : rows;
}

function realtimeMinutes(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d{1,3}$/.test(value) ? Number(value) : NaN;
  return n >= REALTIME_MINUTES.min && n <= REALTIME_MINUTES.max ? n : undefined;
}
