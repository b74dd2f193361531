import type { Db } from '../../../db/database.js';
import { prepared } from '../../../db/statements.js';

/** The widget_usage table: what each workspace's visitors stored, per fixed window of the budgets. */

/**
 * Counts `n` more in the window only while that stays within `limit` (one statement: every process
 * on the database shares the count); false when the window is spent.
 */
export function takeUsage(
  db: Db,
  workspaceId: number,
  kind: string,
  windowMs: number,
  n: number,
  limit: number,
): boolean {
  return (
    prepared<[number, string, number, number, number]>(
      db,
      `INSERT INTO widget_usage (workspace_id, kind, window_ms, n) VALUES (?, ?, ?, ?)
       ON CONFLICT (workspace_id, kind, window_ms) DO UPDATE SET n = n + excluded.n WHERE n + excluded.n <= ?`,
    ).run(workspaceId, kind, windowMs, n, limit).changes === 1
  );
}

/** Deletes the windows that started before `windowMs`. */
export function pruneUsage(db: Db, windowMs: number): void {
  prepared<[number]>(db, 'DELETE FROM widget_usage WHERE window_ms < ?').run(windowMs);
}
