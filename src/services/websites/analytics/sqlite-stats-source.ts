import type { Db } from '../../../db/database.js';
import { daysBetween } from './days.js';
import { createTopExporter } from './top-export.js';
import type {
  DailyTotals,
  DayRange,
  Dimension,
  EventValue,
  HourlyTotals,
  RecentVisit,
  StatsSource,
  TopPage,
  TopQuery,
} from './stats-source.js';
import { eventValueSums, eventValueSumsOf } from './tables/event-values.js';
import { recentVisitsSince } from './tables/recent-visits.js';
import { hasAnyRow, sumsOfTwoNames, topRows, topSummary, type TopParams } from './tables/stats.js';

/** The totals' names in the stats table, besides the DIMENSIONS (whose rows carry their own name). */
export const TOTALS = {
  visitors: 'visitors',
  pageviews: 'pageviews',
  visitorsHours: 'visitors_hours',
  pageviewsHours: 'pageviews_hours',
} as const;

/**
 * The StatsSource over the `stats` table: every answer is a sum over the range's days, grouped by
 * value. Search is a case-insensitive substring (ASCII letters fold, as SQLite's lower() does).
 */
export function createStatsSource(db: Db): StatsSource {
  // The summary and the page from one snapshot, so the total agrees with the rows.
  const top = db.transaction(
    (params: TopParams, sort: 'max' | 'min', limit: number, offset: number): TopPage => {
      const { total, sum } = topSummary(db, params);
      const rows = offset < total ? topRows(db, { ...params, limit, offset }, sort) : [];
      return { rows, total, sum };
    },
  );

  const byName = (site: number, range: DayRange, a: string, b: string) => {
    const out = new Map<string, Map<string, number>>([
      [a, new Map()],
      [b, new Map()],
    ]);
    for (const row of sumsOfTwoNames(db, { site, a, b, from: range.from, to: range.to })) {
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
      };
      return top(params, query.sort, query.limit, query.offset);
    },
    hasData(websiteId): boolean {
      return hasAnyRow(db, websiteId);
    },
    recent(websiteId, sinceMs): RecentVisit[] {
      return recentVisitsSince(db, websiteId, sinceMs).map((r) => ({
        at: new Date(r.at_ms).toISOString(),
        page: r.page,
        referrer: r.referrer,
        country: r.country,
        browser: r.browser,
        operatingSystem: r.operating_system,
        device: r.device,
        visitor: r.visitor === 1,
      }));
    },
    eventValues(websiteId, range, names): EventValue[] {
      return names === undefined
        ? eventValueSums(db, websiteId, range.from, range.to)
        : eventValueSumsOf(db, websiteId, range.from, range.to, names);
    },
  };
}
