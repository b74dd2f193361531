import type { Db } from '../../../../db/database.js';
import { prepared } from '../../../../db/statements.js';

/**
 * The `report_sends` table's repository: the only file with SQL on it. A website's report period
 * is claimed before it is sent (so never twice), and records when it was.
 */

/**
 * Claims the period for `holder`, one statement: of two runs that found it due, one gets it. A
 * claim not sent and last renewed at or before `staleMs` is taken over. False: another has it.
 */
export function claimSend(
  db: Db,
  site: number,
  period: string,
  holder: string,
  nowMs: number,
  staleMs: number,
): boolean {
  return (
    prepared<[number, string, string, number, number]>(
      db,
      `INSERT INTO report_sends (website_id, period, claimed_by, claimed_ms) VALUES (?, ?, ?, ?)
       ON CONFLICT (website_id, period) DO UPDATE SET claimed_by = excluded.claimed_by, claimed_ms = excluded.claimed_ms
       WHERE report_sends.sent_at IS NULL AND report_sends.claimed_ms <= ?`,
    ).run(site, period, holder, nowMs, staleMs).changes === 1
  );
}

/** Renews the holder's unsent claim; false when it is no longer the holder's. */
export function renewClaim(db: Db, site: number, period: string, holder: string, nowMs: number): boolean {
  return (
    prepared<[number, number, string, string]>(
      db,
      `UPDATE report_sends SET claimed_ms = ? WHERE website_id = ? AND period = ? AND claimed_by = ?
       AND sent_at IS NULL`,
    ).run(nowMs, site, period, holder).changes === 1
  );
}

export function markSent(db: Db, site: number, period: string, sentAt: string): void {
  prepared<[string, number, string]>(
    db,
    'UPDATE report_sends SET sent_at = ? WHERE website_id = ? AND period = ?',
  ).run(sentAt, site, period);
}

/** Gives the holder's unsent claim back. */
export function unclaimSend(db: Db, site: number, period: string, holder: string): void {
  prepared<[number, string, string]>(
    db,
    'DELETE FROM report_sends WHERE website_id = ? AND period = ? AND sent_at IS NULL AND claimed_by = ?',
  ).run(site, period, holder);
}

/** The websites whose report of `period` was sent, or claimed after `staleMs`: not due. */
export function settledSends(db: Db, period: string, staleMs: number): Set<number> {
  const rows = prepared<[string, number], { website_id: number }>(
    db,
    `SELECT website_id FROM report_sends WHERE period = ? AND (sent_at IS NOT NULL OR claimed_ms > ?)`,
  ).all(period, staleMs);
  return new Set(rows.map((r) => r.website_id));
}
