import type { Db } from '../../../../db/database.js';
import { prepared } from '../../../../db/statements.js';
import type { ValueCount } from '../stats-source.js';

/**
 * The `stats` table's repository: the only file with SQL on it. One row per website, name (a
 * dimension or a total), UTC day and value, counting hits.
 */

type Named = Record<string, unknown>;

const FILTER = `website_id = @site AND name = @name AND date BETWEEN @from AND @to`;
/** Case-insensitive substring (ASCII letters fold, as SQLite's lower() does); NULL: no search. */
const SEARCH = `(@search IS NULL OR instr(lower(value), lower(@search)) > 0)`;

/** Adds one to an existing row; false when there is none. */
export function bumpExisting(db: Db, site: number, name: string, date: string, value: string): boolean {
  return (
    prepared<[number, string, string, string]>(
      db,
      'UPDATE stats SET count = count + 1 WHERE website_id = ? AND name = ? AND date = ? AND value = ?',
    ).run(site, name, date, value).changes === 1
  );
}

/** The day's distinct values of `name`, counted up to `bound` only (a scan of the key's prefix). */
export function distinctValuesUpTo(db: Db, site: number, name: string, date: string, bound: number): number {
  return prepared<[number, string, string, number], { n: number }>(
    db,
    `SELECT count(*) AS n FROM (SELECT 1 FROM stats WHERE website_id = ? AND name = ? AND date = ? LIMIT ?)`,
  ).get(site, name, date, bound)!.n;
}

/** Adds one to the row, creating it. */
export function bump(db: Db, site: number, name: string, date: string, value: string): void {
  prepared<[number, string, string, string]>(
    db,
    `INSERT INTO stats (website_id, name, date, value, count) VALUES (?, ?, ?, ?, 1)
     ON CONFLICT (website_id, name, date, value) DO UPDATE SET count = count + 1`,
  ).run(site, name, date, value);
}

/** The rows of two names over a range, summed per name and value. */
export function sumsOfTwoNames(
  db: Db,
  params: { site: number; a: string; b: string; from: string; to: string },
): { name: string; value: string; count: number }[] {
  return prepared<[Named], { name: string; value: string; count: number }>(
    db,
    `SELECT name, value, sum(count) AS count FROM stats
     WHERE website_id = @site AND name IN (@a, @b) AND date BETWEEN @from AND @to
     GROUP BY name, value`,
  ).all(params);
}

export interface TopParams {
  readonly site: number;
  readonly name: string;
  readonly from: string;
  readonly to: string;
  readonly search: string | null;
}

/** How many distinct values match, and the sum of their counts. */
export function topSummary(db: Db, params: TopParams): { total: number; sum: number } {
  const row = prepared<[Named], { total: number; sum: number | null }>(
    db,
    `SELECT count(*) AS total, sum(count) AS sum FROM (
       SELECT value, sum(count) AS count FROM stats WHERE ${FILTER} AND ${SEARCH} GROUP BY value)`,
  ).get({ ...params })!;
  return { total: row.total, sum: row.sum ?? 0 };
}

/** A page of the matching values summed over the range: max, highest count first; ties by value. */
export function topRows(
  db: Db,
  params: TopParams & { limit: number; offset: number },
  sort: 'max' | 'min',
): ValueCount[] {
  const order = sort === 'max' ? 'DESC' : 'ASC';
  return prepared<[Named], ValueCount>(
    db,
    `SELECT value, sum(count) AS count FROM stats WHERE ${FILTER} AND ${SEARCH}
     GROUP BY value ORDER BY count ${order}, value ASC LIMIT @limit OFFSET @offset`,
  ).all({ ...params });
}

/**
 * One day's values of `name` in value order, `limit` at a time after `after` (a keyset page on
 * the primary key); `conn` may be an export's own connection.
 */
export function dayValues(
  conn: Db,
  params: { site: number; name: string; date: string; search: string | null },
  limit: number,
  after?: string,
): ValueCount[] {
  const DAY = `website_id = @site AND name = @name AND date = @date AND ${SEARCH}`;
  if (after === undefined) {
    return prepared<[Named], ValueCount>(
      conn,
      `SELECT value, count FROM stats WHERE ${DAY} ORDER BY value LIMIT @limit`,
    ).all({ ...params, limit });
  }
  return prepared<[Named], ValueCount>(
    conn,
    `SELECT value, count FROM stats WHERE ${DAY} AND value > @after ORDER BY value LIMIT @limit`,
  ).all({ ...params, limit, after });
}

/** Whether the website has any row: whether it ever recorded a hit. */
export function hasAnyRow(db: Db, site: number): boolean {
  return (
    prepared<[number], { one: number }>(db, 'SELECT 1 AS one FROM stats WHERE website_id = ? LIMIT 1').get(
      site,
    ) !== undefined
  );
}
