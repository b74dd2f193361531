/**
 * Calendar windows (config `align: calendar`): a day, an ISO week (Monday first unless configured)
 * or a month of a time zone's calendar, from its first instant to the next period's first instant.
 * Months have their real lengths, days their real lengths across DST changes (23h, 25h). Pure: the
 * time is an argument; time zones come from Intl (the ICU data Node ships).
 */

export type CalendarUnit = 'day' | 'week' | 'month';

export interface CalendarSpec {
  readonly unit: CalendarUnit;
  /** An IANA time zone ("UTC", "Europe/Berlin"). */
  readonly timeZone: string;
  /** The first day of a week, ISO numbering: 1 Monday … 7 Sunday. */
  readonly weekStart: number;
}

/** One calendar period: [startMs, endMs). */
export interface CalendarPeriod {
  readonly startMs: number;
  readonly endMs: number;
}

/** A local calendar date. */
interface LocalDate {
  readonly y: number;
  readonly m: number; // 1-12
  readonly d: number;
}

const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Whether Intl knows the zone (the config check). */
export function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/** The wall clock of `ms` in the zone, as if it were UTC (ms precision dropped to seconds). */
function wallClock(ms: number, timeZone: string): number {
  const p: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(ms)) {
    if (part.type !== 'literal') p[part.type] = Number(part.value);
  }
  // Years before 1 are not expected here; formatToParts gives the era-less year.
  return Date.UTC(p['year']!, p['month']! - 1, p['day']!, p['hour']!, p['minute']!, p['second']!);
}

/** The zone's offset from UTC at `ms`, in ms (Berlin in summer: +7_200_000). */
const offsetAt = (ms: number, timeZone: string): number =>
  wallClock(ms, timeZone) - Math.floor(ms / 1000) * 1000;

/** The local date of `ms` in the zone. */
function localDate(ms: number, timeZone: string): LocalDate {
  const w = new Date(timeZone === 'UTC' ? ms : wallClock(ms, timeZone));
  return { y: w.getUTCFullYear(), m: w.getUTCMonth() + 1, d: w.getUTCDate() };
}

/** A date as a day number (days since 1970-01-01), so dates compare and step as integers. */
const dayNumber = (date: LocalDate): number => Date.UTC(date.y, date.m - 1, date.d) / DAY_MS;

/**
 * The first instant whose local date is `date` or later: local midnight, or, where the clocks jump
 * over midnight (a DST gap), the end of the gap; where they fall back over it, the second midnight.
 */
export function startOfDate(date: LocalDate, timeZone: string): number {
  const wall = Date.UTC(date.y, date.m - 1, date.d);
  if (timeZone === 'UTC') return wall;
  const t1 = wall - offsetAt(wall, timeZone);
  const t2 = wall - offsetAt(t1, timeZone);
  const target = dayNumber(date);
  const [a, b] = t1 <= t2 ? [t1, t2] : [t2, t1];
  return dayNumber(localDate(a, timeZone)) >= target ? a : b;
}

/** The first date of the period holding `date`. */
function periodStartDate(date: LocalDate, spec: CalendarSpec): LocalDate {
  if (spec.unit === 'day') return date;
  if (spec.unit === 'month') return { y: date.y, m: date.m, d: 1 };
  const isoWeekday = ((new Date(Date.UTC(date.y, date.m - 1, date.d)).getUTCDay() + 6) % 7) + 1;
  const back = (isoWeekday - spec.weekStart + 7) % 7;
  const start = new Date(Date.UTC(date.y, date.m - 1, date.d - back));
  return { y: start.getUTCFullYear(), m: start.getUTCMonth() + 1, d: start.getUTCDate() };
}

/** The first date of the next period. */
function nextStartDate(start: LocalDate, spec: CalendarSpec): LocalDate {
  const next =
    spec.unit === 'month'
      ? new Date(Date.UTC(start.y, start.m, 1))
      : new Date(Date.UTC(start.y, start.m - 1, start.d + (spec.unit === 'day' ? 1 : 7)));
  return { y: next.getUTCFullYear(), m: next.getUTCMonth() + 1, d: next.getUTCDate() };
}

/** The calendar period holding `nowMs`. */
export function calendarPeriod(spec: CalendarSpec, nowMs: number): CalendarPeriod {
  const start = periodStartDate(localDate(nowMs, spec.timeZone), spec);
  return {
    startMs: startOfDate(start, spec.timeZone),
    endMs: startOfDate(nextStartDate(start, spec), spec.timeZone),
  };
}

/**
 * The period of `nowMs`, remembered: the request path asks once per request, and the answer only
 * changes at a boundary, so Intl is consulted once per period (or when the clock goes back).
 */
export class CalendarClock {
  #period: CalendarPeriod = { startMs: 0, endMs: 0 };

  constructor(readonly spec: CalendarSpec) {}

  periodAt(nowMs: number): CalendarPeriod {
    const p = this.#period;
    if (nowMs >= p.startMs && nowMs < p.endMs) return p;
    return (this.#period = calendarPeriod(this.spec, nowMs));
  }
}
