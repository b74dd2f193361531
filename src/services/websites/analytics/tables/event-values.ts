import type { Db } from '../../../../db/database.js';
import { prepared } from '../../../../db/statements.js';
import type { EventValue } from '../stats-source.js';

/**
 * The `event_values` table's repository: the only file with SQL on it. The values of custom
 * events (`pa.track(name, value, unit)`), summed per website, UTC day, name and unit.
 */

export function addEventValue(
  db: Db,
  site: number,
  date: string,
  name: string,
  unit: string,
  value: number,
): void {
  prepared<[number, string, string, string, number]>(
    db,
    `INSERT INTO event_values (website_id, date, name, unit, count, total) VALUES (?, ?, ?, ?, 1, ?)
     ON CONFLICT (website_id, date, name, unit) DO UPDATE SET count = count + 1, total = total + excluded.total`,
  ).run(site, date, name, unit, value);
}

/** Every name and unit of the range with its sums, by name then unit. */
export function eventValueSums(db: Db, site: number, from: string, to: string): EventValue[] {
  return prepared<[Record<string, unknown>], EventValue>(
    db,
    `SELECT name, unit, sum(count) AS count, sum(total) AS total FROM event_values
     WHERE website_id = @site AND date BETWEEN @from AND @to GROUP BY name, unit ORDER BY name, unit`,
  ).all({ site, from, to });
}

/** The sums of the given names only (a page of the events table), by name then unit. */
export function eventValueSumsOf(
  db: Db,
  site: number,
  from: string,
  to: string,
  names: readonly string[],
): EventValue[] {
  if (names.length === 0) return [];
  return prepared<[Record<string, unknown>], EventValue>(
    db,
    `SELECT name, unit, sum(count) AS count, sum(total) AS total FROM event_values
     WHERE website_id = @site AND date BETWEEN @from AND @to AND name IN (SELECT value FROM json_each(@names))
     GROUP BY name, unit ORDER BY name, unit`,
  ).all({ site, from, to, names: JSON.stringify(names) });
}
