import type { Db } from '../../../../db/database.js';
import { prepared } from '../../../../db/statements.js';

/**
 * The `recent_visits` table's repository: the only file with SQL on it. A pageview kept for the
 * realtime view's last minutes (no IP, no cookie), then deleted.
 */

export interface RecentVisitRow {
  readonly at_ms: number;
  readonly page: string;
  readonly referrer: string | null;
  readonly country: string | null;
  readonly browser: string | null;
  readonly operating_system: string | null;
  readonly device: string | null;
  /** 1: the pageview of a new visitor (counted as a visitor); 0: a further page of a visit. */
  readonly visitor: number;
}

export function insertRecentVisit(db: Db, site: number, row: RecentVisitRow): void {
  prepared<[Record<string, unknown>]>(
    db,
    `INSERT INTO recent_visits (website_id, at_ms, page, referrer, country, browser, operating_system, device, visitor)
     VALUES (@site, @at_ms, @page, @referrer, @country, @browser, @operating_system, @device, @visitor)`,
  ).run({ site, ...row });
}

/** The website's visits after `sinceMs`, newest first. */
export function recentVisitsSince(db: Db, site: number, sinceMs: number): RecentVisitRow[] {
  return prepared<[number, number], RecentVisitRow>(
    db,
    `SELECT at_ms, page, referrer, country, browser, operating_system, device, visitor FROM recent_visits
     WHERE website_id = ? AND at_ms > ? ORDER BY at_ms DESC, id DESC`,
  ).all(site, sinceMs);
}

/** Deletes every visit up to `untilMs` (as a pageview is recorded). */
export function pruneRecentVisits(db: Db, untilMs: number): void {
  prepared<[number]>(db, 'DELETE FROM recent_visits WHERE at_ms <= ?').run(untilMs);
}

/** Deletes at most `limit` visits up to `untilMs` (the housekeeping's batches); how many went. */
export function pruneRecentVisitsBatch(db: Db, untilMs: number, limit: number): number {
  return prepared<[number, number]>(
    db,
    'DELETE FROM recent_visits WHERE id IN (SELECT id FROM recent_visits WHERE at_ms <= ? LIMIT ?)',
  ).run(untilMs, limit).changes;
}
