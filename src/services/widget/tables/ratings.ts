import type { Db } from '../../../db/database.js';
import { prepared } from '../../../db/statements.js';

/** The widget_satisfaction table: one rating per session, the latest kept. */

export interface SatisfactionRow {
  readonly rating: number;
  readonly comment: string | null;
  readonly updated_at: string;
}

export function upsertRating(
  db: Db,
  sessionId: string,
  rating: number,
  comment: string | null,
  now: string,
): SatisfactionRow {
  return prepared<
    [{ sessionId: string; rating: number; comment: string | null; now: string }],
    SatisfactionRow
  >(
    db,
    `INSERT INTO widget_satisfaction (session_id, rating, comment, created_at, updated_at)
     VALUES (@sessionId, @rating, @comment, @now, @now)
     ON CONFLICT (session_id) DO UPDATE SET rating = excluded.rating, comment = excluded.comment,
       updated_at = excluded.updated_at
     RETURNING rating, comment, updated_at`,
  ).get({ sessionId, rating, comment, now })!;
}

/** The ratings of these sessions (those rated). */
export function ratingsOf(db: Db, sessionIds: readonly string[]): Map<string, SatisfactionRow> {
  const rows = prepared<[string], SatisfactionRow & { session_id: string }>(
    db,
    `SELECT session_id, rating, comment, updated_at FROM widget_satisfaction
     WHERE session_id IN (SELECT value FROM json_each(?))`,
  ).all(JSON.stringify(sessionIds));
  return new Map(rows.map(({ session_id, ...rating }) => [session_id, rating]));
}
