import type { Db } from '../../../db/database.js';
import { daysBetween } from './days.js';
import { createTopExporter } from './top-export.js';
import type {
  DailyTotals,
  DayRange,
  Dimension,
  HourlyTotals,
  RecentVisit,
  StatsSource,
  TopPage,
  TopQuery,
  ValueCount,
} from './stats-source.js';

/** The totals' names in the stats table, besides the DIMENSIONS (whose rows carry their own name). */
export const TOTALS = {
  visitors: 'visitors',
  pageviews: 'pageviews',
  visitorsHours: 'visitors_hours',
  pageviewsHours: 'pageviews_hours',
} as const;

/** The sum of an event's values per unit over a range. */
export interface EventValue {
  readonly name: string;
  readonly unit: string;
  readonly count: number;
  readonly total: number;
}

/** StatsSource, plus what only the e-mail reports and the pages' event table read. */
export interface SqliteStatsSource extends StatsSource {
  /** Each event name and unit with how many carried a value and their sum, over the range. */
  eventValues(websiteId: number, range: DayRange): readonly EventValue[];
}

type Named = Record<string, unknown>;

/**
 * The StatsSource over the `stats` table: every answer is a sum over the range's days, grouped by
 * value. Search is a case-insensitive substring (ASCII letters fold, as SQLite's lower() does).
 */
export function createStatsSource(db: Db): SqliteStatsSource {
  const totals = db.prepare<Named, { name: string; value: string; count: number }>(
    `SELECT name, value, sum(count) AS count FROM stats
     WHERE website_id = @site AND name IN (@a, @b) AND date BETWEEN @from AND @to
     GROUP BY name, value`,
  );
  const FILTER = `website_id = @site AND name = @name AND date BETWEEN @from AND @to`;
  const SEARCH = `(@search IS NULL OR instr(lower(value), lower(@search)) > 0)`;
  const summary = db.prepare<Named, { total: number; sum: number | null }>(
    `SELECT count(*) AS total, sum(count) AS sum FROM (
       SELECT value, sum(count) AS count FROM stats WHERE ${FILTER} AND ${SEARCH} GROUP BY value)`,
  );
  const page = (order: string) =>
    db.prepare<Named, ValueCount>(
      `SELECT value, sum(count) AS count FROM stats WHERE ${FILTER} AND ${SEARCH}
       GROUP BY value ORDER BY count ${order}, value ASC LIMIT @limit OFFSET @offset`,
    );
  const pages = { max: page('DESC'), min: page('ASC') };
  const recent = db.prepare<[number, number], RecentRow>(
    `SELECT at_ms, page, referrer, country, browser, operating_system, device FROM recent_visits
     WHERE website_id = ? AND at_ms > ? ORDER BY at_ms DESC, id DESC`,
  );
  const events = db.prepare<Named, EventValue>(
    `SELECT name, unit, sum(count) AS count, sum(total) AS total FROM event_values
     WHERE website_id = @site AND date BETWEEN @from AND @to GROUP BY name, unit ORDER BY name, unit`,
  );
  // The summary and the page from one snapshot, so the total agrees with the rows.
  const top = db.transaction((params: Named, sort: 'max' | 'min', offset: number): TopPage => {
    const { total, sum } = summary.get(params)!;
    const rows = offset < total ? pages[sort].all({ ...params, offset }) : [];
    return { rows, total, sum: sum ?? 0 };
  });

  const byName = (site: number, range: DayRange, a: string, b: string) => {
    const out = new Map<string, Map<string, number>>([
      [a, new Map()],
      [b, new Map()],
    ]);
    for (const row of totals.all({ site, a, b, from: range.from, to: range.to })) {
      out.get(row.name)!.set(row.value, row.count);
    }
    return [out.get(a)!, out.get(b)!] as const;
  };

  const exporter = createTopExporter(db);
  return {
    topPages: exporter.pages,
    daily(websiteId, range): DailyTotals[] {
      const [visitors, pageviews] = byName(websiteId, range, TOTALS.visitors, TOTALS.pageviews);
      return daysBetween(range.from, range.to).map((date) => ({
        date,
        visitors: visitors.get(date) ?? 0,
        pageviews: pageviews.get(date) ?? 0,
      }));
    },
    hourly(websiteId, range): HourlyTotals[] {
      const [visitors, pageviews] = byName(websiteId, range, TOTALS.visitorsHours, TOTALS.pageviewsHours);
      return Array.from({ length: 24 }, (_, hour) => ({
        hour,
        visitors: visitors.get(String(hour)) ?? 0,
        pageviews: pageviews.get(String(hour)) ?? 0,
      }));
    },
    top(websiteId: number, dimension: Dimension, range: DayRange, query: TopQuery): TopPage {
      const params = {
        site: websiteId,
        name: dimension,
        from: range.from,
        to: range.to,
        search: query.search === undefined || query.search === '' ? null : query.search,
        limit: query.limit,
      };
      return top(params, query.sort, query.offset);
    },
    recent(websiteId, sinceMs): RecentVisit[] {
      return recent.all(websiteId, sinceMs).map((r) => ({
        at: new Date(r.at_ms).toISOString(),
        page: r.page,
        referrer: r.referrer,
        country: r.country,
        browser: r.browser,
        operatingSystem: r.operating_system,
        device: r.device,
      }));
    },
    eventValues(websiteId, range): EventValue[] {
      return events.all({ site: websiteId, from: range.from, to: range.to });
    },
  };
}

interface RecentRow {
  at_ms: number;
  page: string;
  referrer: string | null;
  country: string | null;
  browser: string | null;
  operating_system: string | null;
  device: string | null;
}
