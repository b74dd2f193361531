import type { Db } from '../../../db/database.js';
import { prepared } from '../../../db/statements.js';

/**
 * The widget_messages table. A message's public id is its `seq`, counted per session; the row id
 * is only the shared stream poller's cursor over every session, and never leaves the service.
 */

export type Sender = 'visitor' | 'agent' | 'system';

export interface MessageRow {
  readonly id: number;
  readonly sender: Sender;
  readonly body: string;
  readonly created_at: string;
}

/** A message with its session and row id, as the shared poll of the open streams reads them. */
export interface PolledMessage extends MessageRow {
  readonly row_id: number;
  readonly session_id: string;
}

const COLUMNS = 'seq AS id, sender, body, created_at';

export function insertMessage(
  db: Db,
  sessionId: string,
  seq: number,
  sender: Sender,
  body: string,
  at: string,
): MessageRow {
  return prepared<[string, number, string, string, string], MessageRow>(
    db,
    `INSERT INTO widget_messages (session_id, seq, sender, body, created_at) VALUES (?, ?, ?, ?, ?)
     RETURNING ${COLUMNS}`,
  ).get(sessionId, seq, sender, body, at)!;
}

/** Up to `limit` of the session's messages after id `after`, oldest first. */
export function messagesAfter(db: Db, sessionId: string, after: number, limit: number): MessageRow[] {
  return prepared<[string, number, number], MessageRow>(
    db,
    `SELECT ${COLUMNS} FROM widget_messages WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
  ).all(sessionId, after, limit);
}

/** A page of the session's messages after id `after` (0: all), oldest first, and how many there are. */
export function messagePage(
  db: Db,
  sessionId: string,
  after: number,
  limit: number,
  offset: number,
): { rows: MessageRow[]; total: number } {
  const rows = prepared<[string, number, number, number], MessageRow>(
    db,
    `SELECT ${COLUMNS} FROM widget_messages WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ? OFFSET ?`,
  ).all(sessionId, after, limit, offset);
  return { rows, total: countMessages(db, sessionId, after) };
}

export function countMessages(db: Db, sessionId: string, after = 0): number {
  return prepared<[string, number], { n: number }>(
    db,
    'SELECT count(*) AS n FROM widget_messages WHERE session_id = ? AND seq > ?',
  ).get(sessionId, after)!.n;
}

export function deleteMessages(db: Db, sessionId: string): number {
  return prepared<[string]>(db, 'DELETE FROM widget_messages WHERE session_id = ?').run(sessionId).changes;
}

/** The highest row id stored (0: none): where the shared poller starts. */
export function maxRowId(db: Db): number {
  return prepared<[], { id: number | null }>(db, 'SELECT max(id) AS id FROM widget_messages').get()?.id ?? 0;
}

/** Up to `limit` messages of any session stored after row `afterRow`, in row order. */
export function messagesAfterRow(db: Db, afterRow: number, limit: number): PolledMessage[] {
  return prepared<[number, number], PolledMessage>(
    db,
    `SELECT id AS row_id, session_id, ${COLUMNS} FROM widget_messages WHERE id > ? ORDER BY id LIMIT ?`,
  ).all(afterRow, limit);
}

/** What the inbox shows of a conversation in its list. */
export interface MessageSummary {
  readonly session_id: string;
  readonly messages: number;
  /** Visitor messages after the owner's read mark. */
  readonly unread: number;
  readonly last_sender: Sender | null;
  readonly last_body: string | null;
}

/** The summaries of these sessions, each with the owner's read mark. */
export function messageSummaries(
  db: Db,
  sessions: readonly { id: string; readSeq: number }[],
): Map<string, MessageSummary> {
  const rows = prepared<[string], MessageSummary>(
    db,
    `SELECT j.value ->> '$.id' AS session_id,
       (SELECT count(*) FROM widget_messages m WHERE m.session_id = j.value ->> '$.id') AS messages,
       (SELECT count(*) FROM widget_messages m WHERE m.session_id = j.value ->> '$.id'
          AND m.sender = 'visitor' AND m.seq > j.value ->> '$.readSeq') AS unread,
       l.sender AS last_sender, l.body AS last_body
     FROM json_each(?) AS j
     LEFT JOIN widget_messages l ON l.id = (SELECT max(m.id) FROM widget_messages m
       WHERE m.session_id = j.value ->> '$.id')`,
  ).all(JSON.stringify(sessions));
  return new Map(rows.map((r) => [r.session_id, r]));
}
