import { laravelTime } from '../../kit/laravel-time.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../../../db/database.js';
import { ownsWebsite } from '../data.js';
import { findUser } from '../../accounts/accounts.js';
import { HttpError, NOT_FOUND } from '../../kit/errors.js';
import { listPage, pageNumber, type ListAddress } from '../../kit/pagination.js';
import { parseStatsQuery, REALTIME, type Series } from './stats-query.js';
import type { RecentVisit, StatsSource, ValueCount } from './stats-source.js';

export const STATS_PATHS = { stats: '/api/v1/stats/:id', account: '/api/v1/account' } as const;

/** The API key owner's account, as `GET /api/v1/account` answers it. */
export interface Account {
  readonly id: number;
  readonly name: string;
  readonly email: string | null;
  readonly created_at: string;
}

/** A recent visit as name=realtime answers it: RecentVisit's fields in snake_case. */
export interface RealtimeVisit {
  readonly at: string;
  readonly page: string;
  readonly referrer: string | null;
  readonly country: string | null;
  readonly browser: string | null;
  readonly operating_system: string | null;
  readonly device: string | null;
  /** The first pageview of a new visitor (the realtime visitors count these). */
  readonly visitor: boolean;
}

/** An event's value sums per unit, on the rows of name=events. */
export interface EventValueSum {
  readonly unit: string;
  /** How many of the events carried a value. */
  readonly count: number;
  readonly total: number;
}

export const realtimeVisit = (v: RecentVisit): RealtimeVisit => ({
  at: laravelTime(v.at),
  page: v.page,
  referrer: v.referrer,
  country: v.country,
  browser: v.browser,
  operating_system: v.operatingSystem,
  device: v.device,
  visitor: v.visitor,
});

const notFound = () => new HttpError(404, NOT_FOUND, 'not_found');

/** A daily or hourly series as value/count rows: the date (or the hour, "0"–"23") and its count. */
function seriesRows(source: StatsSource, site: number, name: Series, range: { from: string; to: string }) {
  const key = name.startsWith('visitors') ? 'visitors' : 'pageviews';
  if (name.endsWith('_hours')) {
    return source.hourly(site, range).map((h) => ({ value: String(h.hour), count: h[key] }));
  }
  return source.daily(site, range).map((d) => ({ value: d.date, count: d[key] }));
}

/** The events' rows with their value sums per unit (`values`, [] when none carried a value). */
function withEventValues(
  source: StatsSource,
  site: number,
  range: { from: string; to: string },
  rows: readonly ValueCount[],
): (ValueCount & { values: EventValueSum[] })[] {
  const sums = source.eventValues(
    site,
    range,
    rows.map((r) => r.value),
  );
  return rows.map((r) => ({
    ...r,
    values: sums.filter((v) => v.name === r.value).map(({ unit, count, total }) => ({ unit, count, total })),
  }));
}

/**
 * The stats API and the account API, on the websites API's routes (the caller's API key required).
 * Another owner's website answers exactly like a missing one.
 */
export function registerStatsRoutes(
  app: FastifyInstance,
  db: Db,
  source: StatsSource,
  publicUrl: string,
  now: () => number = Date.now,
): void {
  const owns = (user: number, id: number) => ownsWebsite(db, user, id);

  app.get(STATS_PATHS.stats, async (request: FastifyRequest<{ Params: { id: string } }>) => {
    const id = /^\d{1,15}$/.test(request.params.id) ? Number(request.params.id) : 0;
    if (id < 1 || !owns(request.userId, id)) throw notFound();
    const query = parseStatsQuery(request.query, now());
    const page = pageNumber((request.query as Record<string, unknown>).page);
    const offset = (page - 1) * query.perPage;
    const q = request.url.indexOf('?');
    const address: ListAddress = {
      path: `${publicUrl}/api/v1/stats/${id}`,
      query: q === -1 ? '' : request.url.slice(q + 1),
    };
    if (query.name === REALTIME) {
      const visits = source.recent(id, now() - query.minutes! * 60_000);
      const rows = visits.slice(offset, offset + query.perPage).map(realtimeVisit);
      return listPage(address, rows, visits.length, page, query.perPage, query.sort);
    }
    let rows: (ValueCount & { values?: EventValueSum[] })[];
    let total: number;
    if (query.name === 'visitors' || query.name === 'pageviews' || query.name.endsWith('_hours')) {
      const all = seriesRows(source, id, query.name as Series, query.range);
      rows = all.slice(offset, offset + query.perPage);
      total = all.length;
    } else {
      const top = source.top(id, query.name as Exclude<typeof query.name, Series>, query.range, {
        search: query.search,
        sort: query.sort,
        limit: query.perPage,
        offset,
      });
      rows = [...top.rows];
      total = top.total;
      if (query.name === 'events') rows = withEventValues(source, id, query.range, top.rows);
    }
    return listPage(address, rows, total, page, query.perPage, query.sort);
  });

  app.get(STATS_PATHS.account, async (request) => {
    const account: Account | undefined = findUser(db, request.userId);
    if (!account) throw notFound();
    return { data: { ...account, created_at: laravelTime(account.created_at) }, status: 200 };
  });
}
