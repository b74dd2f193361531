// Calendar periods against a reference model that knows nothing of offsets: it reads local dates
// through Intl and searches for the first instant of a date, minute by minute (every zone's changes
// fall on whole minutes). DST changes (also over midnight), month ends and leap years included.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  CalendarClock,
  calendarPeriod,
  isTimeZone,
  type CalendarSpec,
  type CalendarUnit,
} from '../../../src/limits/window-maths/calendar.js';

const ZONES = [
  'UTC',
  'Europe/Berlin',
  'America/New_York',
  'America/Sao_Paulo', // DST began at midnight until 2019: the day began at 01:00
  'America/Santiago', // clocks fell back at midnight
  'America/Havana', // midnight gaps
  'Asia/Tehran',
  'Australia/Lord_Howe', // 30-minute DST
  'Pacific/Chatham',
  'Asia/Kathmandu',
];
const MINUTE = 60_000;
const fmt = new Map<string, Intl.DateTimeFormat>();

/** The reference's local date, as a sortable number yyyymmdd. */
function refDate(ms: number, timeZone: string): number {
  let f = fmt.get(timeZone);
  if (!f) fmt.set(timeZone, (f = new Intl.DateTimeFormat('en-CA', { timeZone, dateStyle: 'short' })));
  return Number(f.format(ms).replaceAll('-', ''));
}

const ymd = (d: Date) => d.getUTCFullYear() * 10000 + (d.getUTCMonth() + 1) * 100 + d.getUTCDate();
const dateOf = (n: number) =>
  new Date(Date.UTC(Math.floor(n / 10000), (Math.floor(n / 100) % 100) - 1, n % 100));

/** The first instant (minute-aligned) from which the local date is `date` or later, searched near `near`. */
function refStart(date: number, timeZone: string, near: number): number {
  let t = Math.floor(near / MINUTE) * MINUTE - 2 * 86_400_000;
  while (refDate(t, timeZone) < date) t += 3_600_000;
  t -= 3_600_000;
  while (refDate(t, timeZone) < date) t += MINUTE;
  return t;
}

/** The reference period: the period's first date by plain date arithmetic, then searched instants. */
function refPeriod(spec: CalendarSpec, now: number): { startMs: number; endMs: number } {
  const today = dateOf(refDate(now, spec.timeZone));
  let first: Date;
  let next: Date;
  if (spec.unit === 'day') {
    first = today;
    next = new Date(today.getTime() + 86_400_000);
  } else if (spec.unit === 'month') {
    first = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1));
    next = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + 1, 1));
  } else {
    first = today;
    const iso = (d: Date) => (d.getUTCDay() === 0 ? 7 : d.getUTCDay());
    while (iso(first) !== spec.weekStart) first = new Date(first.getTime() - 86_400_000);
    next = new Date(first.getTime() + 7 * 86_400_000);
  }
  return {
    startMs: refStart(ymd(first), spec.timeZone, first.getTime()),
    endMs: refStart(ymd(next), spec.timeZone, next.getTime()),
  };
}

const specArb = fc.record({
  unit: fc.constantFrom<CalendarUnit>('day', 'week', 'month'),
  timeZone: fc.constantFrom(...ZONES),
  weekStart: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 7 })),
});
// 2000..2040, with extra weight on the hours around month ends and DST changes.
const instantArb = fc.oneof(
  fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2040, 0, 1) }),
  fc
    .record({
      y: fc.integer({ min: 2000, max: 2039 }),
      m: fc.integer({ min: 0, max: 12 }),
      minutes: fc.integer({ min: -36 * 60, max: 36 * 60 }),
    })
    .map(({ y, m, minutes }) => Date.UTC(y, m, 1) + minutes * MINUTE + 59_999),
);
const dstArb = fc
  .record({
    zone: fc.constantFrom(
      { timeZone: 'America/Sao_Paulo', at: Date.UTC(2018, 10, 4, 3) }, // 00:00 → 01:00
      { timeZone: 'America/Santiago', at: Date.UTC(2019, 3, 7, 3) }, // 24:00 → 23:00
      { timeZone: 'Europe/Berlin', at: Date.UTC(2024, 2, 31, 1) },
      { timeZone: 'Europe/Berlin', at: Date.UTC(2024, 9, 27, 1) },
      { timeZone: 'America/Havana', at: Date.UTC(2023, 2, 12, 5) },
    ),
    minutes: fc.integer({ min: -30 * 60, max: 30 * 60 }),
    unit: fc.constantFrom<CalendarUnit>('day', 'week', 'month'),
  })
  .map(({ zone, minutes, unit }) => ({
    spec: { unit, timeZone: zone.timeZone, weekStart: 1 },
    now: zone.at + minutes * MINUTE,
  }));

describe('calendar periods', () => {
  test('match the reference model (zones, week starts, month ends, leap years)', () => {
    fc.assert(
      fc.property(specArb, instantArb, (spec, now) => {
        const p = calendarPeriod(spec, now);
        expect(p).toEqual(refPeriod(spec, now));
        expect(p.startMs <= now && now < p.endMs).toBe(true);
        // The next period starts where this one ends.
        expect(calendarPeriod(spec, p.endMs).startMs).toBe(p.endMs);
      }),
      { numRuns: 300 },
    );
  });

  test('match the reference model around DST changes, midnight ones included', () => {
    fc.assert(
      fc.property(dstArb, ({ spec, now }) => {
        expect(calendarPeriod(spec, now)).toEqual(refPeriod(spec, now));
      }),
      { numRuns: 300 },
    );
  });

  test('exact boundaries: real month lengths, leap days, 23- and 25-hour days, ISO weeks', () => {
    const utc = (unit: CalendarUnit, weekStart = 1): CalendarSpec => ({ unit, timeZone: 'UTC', weekStart });
    expect(calendarPeriod(utc('month'), Date.UTC(2024, 1, 29, 23, 59))).toEqual({
      startMs: Date.UTC(2024, 1, 1),
      endMs: Date.UTC(2024, 2, 1),
    });
    expect(calendarPeriod(utc('month'), Date.UTC(2023, 1, 10)).endMs).toBe(Date.UTC(2023, 2, 1));
    expect(calendarPeriod(utc('month'), Date.UTC(2026, 11, 31, 12)).endMs).toBe(Date.UTC(2027, 0, 1));
    // 2026-11-26 is a Thursday: the ISO week began on Monday the 23rd; a Sunday-first week on the 22nd.
    expect(calendarPeriod(utc('week'), Date.UTC(2026, 10, 26, 5))).toEqual({
      startMs: Date.UTC(2026, 10, 23),
      endMs: Date.UTC(2026, 10, 30),
    });
    expect(calendarPeriod(utc('week', 7), Date.UTC(2026, 10, 26)).startMs).toBe(Date.UTC(2026, 10, 22));
    const berlin: CalendarSpec = { unit: 'day', timeZone: 'Europe/Berlin', weekStart: 1 };
    const spring = calendarPeriod(berlin, Date.UTC(2024, 2, 31, 12));
    expect(spring).toEqual({ startMs: Date.UTC(2024, 2, 30, 23), endMs: Date.UTC(2024, 2, 31, 22) });
    expect(spring.endMs - spring.startMs).toBe(23 * 3_600_000);
    const autumn = calendarPeriod(berlin, Date.UTC(2024, 9, 27, 12));
    expect(autumn.endMs - autumn.startMs).toBe(25 * 3_600_000);
    // São Paulo, 2018-11-04: the clocks went from 00:00 to 01:00, so the day began at 01:00 local (03:00 UTC).
    const sp: CalendarSpec = { unit: 'day', timeZone: 'America/Sao_Paulo', weekStart: 1 };
    expect(calendarPeriod(sp, Date.UTC(2018, 10, 4, 12)).startMs).toBe(Date.UTC(2018, 10, 4, 3));
  });

  test('the clock remembers its period and moves on at the boundary', () => {
    const clock = new CalendarClock({ unit: 'day', timeZone: 'UTC', weekStart: 1 });
    const a = clock.periodAt(Date.UTC(2026, 0, 1, 23, 59, 59, 999));
    expect(clock.periodAt(Date.UTC(2026, 0, 1, 1))).toBe(a);
    expect(clock.periodAt(Date.UTC(2026, 0, 2)).startMs).toBe(Date.UTC(2026, 0, 2));
    expect(clock.periodAt(Date.UTC(2025, 11, 31)).startMs).toBe(Date.UTC(2025, 11, 31));
  });

  test('time zones are checked', () => {
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
  });
});
