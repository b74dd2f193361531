import type { Db } from '../../../db/database.js';
import { prepared } from '../../../db/statements.js';

/** The widget_events table: what a visitor's widget reports (opened, page views, …). */

export interface NewEvent {
  readonly type: string;
  readonly occurredAt: string;
  readonly data: string | null;
}

export interface EventRow {
  readonly id: number;
  readonly type: string;
  readonly occurred_at: string;
  /** The event's data as JSON text, or null. */
  readonly data: string | null;
  readonly received_at: string;
}

/** Stores a batch of the session's events, all or none. */
export function insertEvents(db: Db, sessionId: string, events: readonly NewEvent[], now: string): void {
  const insert = prepared<[NewEvent & { sessionId: string; now: string }]>(
    db,
    `INSERT INTO widget_events (session_id, type, occurred_at, data, received_at)
     VALUES (@sessionId, @type, @occurredAt, @data, @now)`,
  );
  db.transaction(() => {
    for (const e of events) insert.run({ sessionId, ...e, now });
  }).immediate();
}

/** A page of the session's events, in the order they were received, and how many there are. */
export function eventPage(
  db: Db,
  sessionId: string,
  limit: number,
  offset: number,
): { rows: EventRow[]; total: number } {
  const rows = prepared<[string, number, number], EventRow>(
    db,
    `SELECT id, type, occurred_at, data, received_at FROM widget_events WHERE session_id = ?
     ORDER BY id LIMIT ? OFFSET ?`,
  ).all(sessionId, limit, offset);
  const { n } = prepared<[string], { n: number }>(
    db,
    'SELECT count(*) AS n FROM widget_events WHERE session_id = ?',
  ).get(sessionId)!;
  return { rows, total: n };
}

/** Deletes up to `limit` events received before `before` (ISO); returns how many went. */
export function deleteEventsBefore(db: Db, before: string, limit: number): number {
  return prepared<[string, number]>(
    db,
    `DELETE FROM widget_events WHERE id IN
       (SELECT id FROM widget_events WHERE received_at < ? ORDER BY received_at LIMIT ?)`,
  ).run(before, limit).changes;
}
