import type { Db } from '../../../db/database.js';
import { prepared } from '../../../db/statements.js';

/** The widget_sessions table: one row per visitor session, the conversation's counters and marks. */

export interface SessionRow {
  readonly id: string;
  readonly workspace_id: number;
  readonly website_id: number | null;
  readonly page_url: string | null;
  readonly human_requested_at: string | null;
}

/** A session's place as bound to SQL (null: not given). */
export interface PlaceParams {
  readonly websiteId: number | null;
  readonly pageUrl: string | null;
  readonly locale: string | null;
}

export function findSession(db: Db, id: string): SessionRow | undefined {
  return prepared<[string], SessionRow>(
    db,
    'SELECT id, workspace_id, website_id, page_url, human_requested_at FROM widget_sessions WHERE id = ?',
  ).get(id);
}

export function insertSession(
  db: Db,
  id: string,
  workspaceId: number,
  place: PlaceParams,
  now: string,
): void {
  prepared<[PlaceParams & { id: string; workspaceId: number; now: string }]>(
    db,
    `INSERT INTO widget_sessions (id, workspace_id, website_id, page_url, locale, created_at, last_seen_at)
     VALUES (@id, @workspaceId, @websiteId, @pageUrl, @locale, @now, @now)`,
  ).run({ id, workspaceId, ...place, now });
}

/** A resumed session keeps what the new init does not say. */
export function touchSession(db: Db, id: string, place: PlaceParams, now: string): void {
  prepared<[PlaceParams & { id: string; now: string }]>(
    db,
    `UPDATE widget_sessions SET website_id = coalesce(@websiteId, website_id),
       page_url = coalesce(@pageUrl, page_url), locale = coalesce(@locale, locale), last_seen_at = @now
     WHERE id = @id`,
  ).run({ id, ...place, now });
}

export function setTyping(db: Db, id: string, at: string | null): void {
  prepared<[string | null, string]>(db, 'UPDATE widget_sessions SET typing_at = ? WHERE id = ?').run(at, id);
}

/** Marks the session for a human; false when it already was (or is gone). */
export function markHumanRequested(db: Db, id: string, at: string): boolean {
  return (
    prepared<[string, string]>(
      db,
      'UPDATE widget_sessions SET human_requested_at = ? WHERE id = ? AND human_requested_at IS NULL',
    ).run(at, id).changes === 1
  );
}

export function resetHumanRequest(db: Db, id: string): void {
  prepared<[string]>(db, 'UPDATE widget_sessions SET human_requested_at = NULL WHERE id = ?').run(id);
}

/**
 * Takes the session's next message id (its own sequence: ids say nothing about other sessions),
 * and records the activity; undefined when the session is gone.
 */
export function nextMessageSeq(db: Db, id: string, at: string): number | undefined {
  return prepared<[string, string], { seq: number }>(
    db,
    `UPDATE widget_sessions SET message_seq = message_seq + 1, last_message_at = ? WHERE id = ?
     RETURNING message_seq AS seq`,
  ).get(at, id)?.seq;
}

/** The session's highest message id ever given (0: none), whether or not it was cleared since. */
export function lastMessageSeq(db: Db, id: string): number {
  return (
    prepared<[string], { seq: number }>(
      db,
      'SELECT message_seq AS seq FROM widget_sessions WHERE id = ?',
    ).get(id)?.seq ?? 0
  );
}

/** The owner has read the conversation up to message `seq` (a mark never moves back). */
export function markOwnerRead(db: Db, id: string, seq: number): void {
  prepared<[number, string]>(
    db,
    'UPDATE widget_sessions SET owner_read_seq = max(owner_read_seq, ?) WHERE id = ?',
  ).run(seq, id);
}

/** Deletes the session; its messages, events, leads and rating go with it (ON DELETE CASCADE). */
export function deleteSession(db: Db, id: string): boolean {
  return prepared<[string]>(db, 'DELETE FROM widget_sessions WHERE id = ?').run(id).changes > 0;
}

/** Which of these sessions no longer exist. */
export function missingSessions(db: Db, ids: readonly string[]): string[] {
  return prepared<[string], { id: string }>(
    db,
    `SELECT j.value AS id FROM json_each(?) AS j
     WHERE NOT EXISTS (SELECT 1 FROM widget_sessions s WHERE s.id = j.value)`,
  )
    .all(JSON.stringify(ids))
    .map((r) => r.id);
}

/** A conversation as the owner's inbox lists it. */
export interface ConversationRow {
  readonly id: string;
  readonly website_id: number | null;
  readonly page_url: string | null;
  readonly locale: string | null;
  readonly created_at: string;
  /** Null: no message yet (a session with only a lead or a rating). */
  readonly last_message_at: string | null;
  readonly human_requested_at: string | null;
  readonly owner_read_seq: number;
}

const CONVERSATION = `id, website_id, page_url, locale, created_at, last_message_at, human_requested_at,
  owner_read_seq`;

/** The workspace's sessions with a message, newest activity first. */
export function conversationPage(
  db: Db,
  workspaceId: number,
  limit: number,
  offset: number,
): { rows: ConversationRow[]; total: number } {
  const rows = prepared<[number, number, number], ConversationRow>(
    db,
    `SELECT ${CONVERSATION} FROM widget_sessions WHERE workspace_id = ? AND last_message_at IS NOT NULL
     ORDER BY last_message_at DESC, id LIMIT ? OFFSET ?`,
  ).all(workspaceId, limit, offset);
  const { n } = prepared<[number], { n: number }>(
    db,
    'SELECT count(*) AS n FROM widget_sessions WHERE workspace_id = ? AND last_message_at IS NOT NULL',
  ).get(workspaceId)!;
  return { rows, total: n };
}

/** One conversation of the workspace (another workspace's is as unknown as a missing one). */
export function findConversation(db: Db, workspaceId: number, id: string): ConversationRow | undefined {
  return prepared<[string, number], ConversationRow>(
    db,
    `SELECT ${CONVERSATION} FROM widget_sessions WHERE id = ? AND workspace_id = ?`,
  ).get(id, workspaceId);
}
