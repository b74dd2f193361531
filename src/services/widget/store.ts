import type { Db } from '../../db/database.js';
import { nowIso as now } from '../../db/timestamps.js';
import { isWorkspaceOwnersWebsite } from '../websites/data.js';
import { findCoupon, type CouponRow } from '../bulksync/store.js';
import { findWorkspace, workspaceName as workspaceNameOf } from '../accounts/workspaces.js';

/** The widget's data access: every statement is prepared once, when the service starts. */

export interface SessionRow {
  readonly id: string;
  readonly workspace_id: number;
  readonly workspace_name: string;
  readonly website_id: number | null;
  readonly page_url: string | null;
  readonly human_requested_at: string | null;
}

export interface MessageRow {
  readonly id: number;
  readonly sender: 'visitor' | 'agent' | 'system';
  readonly body: string;
  readonly created_at: string;
}

/** A message with the session it belongs to (the shared poll of the open streams reads every session's). */
export interface SessionMessageRow extends MessageRow {
  readonly session_id: string;
}

export interface LeadRow {
  readonly id: number;
  readonly name: string;
  readonly email: string;
  readonly message: string | null;
  readonly created_at: string;
}

export interface SatisfactionRow {
  readonly rating: number;
  readonly comment: string | null;
  readonly updated_at: string;
}

export type { CouponRow } from '../bulksync/store.js';

export interface SessionPlace {
  readonly websiteId: number | undefined;
  readonly pageUrl: string | undefined;
  readonly locale: string | undefined;
}

/** A session's place as bound to SQL (null: not given). */
interface PlaceParams {
  readonly websiteId: number | null;
  readonly pageUrl: string | null;
  readonly locale: string | null;
}

export interface NewEvent {
  readonly type: string;
  readonly occurredAt: string;
  readonly data: string | null;
}

export class WidgetStore {
  readonly #s;
  readonly #insertEvents;
  readonly #erase;
  readonly #clear;
  readonly #requestHuman;

  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
    this.#s = {
      session: db.prepare<[string], Omit<SessionRow, 'workspace_name'>>(
        `SELECT id, workspace_id, website_id, page_url, human_requested_at FROM widget_sessions WHERE id = ?`,
      ),
      insertSession: db.prepare<[PlaceParams & { id: string; workspaceId: number; now: string }]>(
        `INSERT INTO widget_sessions (id, workspace_id, website_id, page_url, locale, created_at, last_seen_at)
         VALUES (@id, @workspaceId, @websiteId, @pageUrl, @locale, @now, @now)`,
      ),
      // A resumed session keeps what the new init does not say.
      touchSession: db.prepare<[PlaceParams & { id: string; now: string }]>(
        `UPDATE widget_sessions SET website_id = coalesce(@websiteId, website_id),
           page_url = coalesce(@pageUrl, page_url), locale = coalesce(@locale, locale), last_seen_at = @now
         WHERE id = @id`,
      ),
      insertMessage: db.prepare<[string, string, string, string], MessageRow>(
        `INSERT INTO widget_messages (session_id, sender, body, created_at) VALUES (?, ?, ?, ?)
         RETURNING id, sender, body, created_at`,
      ),
      messagesAfter: db.prepare<[string, number, number], MessageRow>(
        `SELECT id, sender, body, created_at FROM widget_messages WHERE session_id = ? AND id > ?
         ORDER BY id LIMIT ?`,
      ),
      maxMessageId: db.prepare<[], { id: number | null }>('SELECT max(id) AS id FROM widget_messages'),
      // The messages of every session stored after a cursor, then (id NULL) those of the given
      // sessions (a JSON array) that no longer exist: one statement for all open streams.
      pollStreams: db.prepare<
        [{ after: number; limit: number; sessions: string }],
        {
          id: number | null;
          session_id: string;
          sender: MessageRow['sender'];
          body: string;
          created_at: string;
        }
      >(
        `SELECT id, session_id, sender, body, created_at FROM (
           SELECT id, session_id, sender, body, created_at FROM widget_messages WHERE id > @after
           ORDER BY id LIMIT @limit)
         UNION ALL
         SELECT NULL, j.value, NULL, NULL, NULL FROM json_each(@sessions) AS j
         WHERE NOT EXISTS (SELECT 1 FROM widget_sessions s WHERE s.id = j.value)`,
      ),
      lastMessageId: db.prepare<[string], { id: number | null }>(
        'SELECT max(id) AS id FROM widget_messages WHERE session_id = ?',
      ),
      messagePage: db.prepare<[string, number, number], MessageRow>(
        `SELECT id, sender, body, created_at FROM widget_messages WHERE session_id = ?
         ORDER BY id LIMIT ? OFFSET ?`,
      ),
      messageCount: db.prepare<[string], { n: number }>(
        'SELECT count(*) AS n FROM widget_messages WHERE session_id = ?',
      ),
      deleteMessages: db.prepare<[string]>('DELETE FROM widget_messages WHERE session_id = ?'),
      resetHuman: db.prepare<[string]>('UPDATE widget_sessions SET human_requested_at = NULL WHERE id = ?'),
      markHuman: db.prepare<[string, string]>(
        'UPDATE widget_sessions SET human_requested_at = ? WHERE id = ? AND human_requested_at IS NULL',
      ),
      humanRequestedAt: db.prepare<[string], { at: string | null }>(
        'SELECT human_requested_at AS at FROM widget_sessions WHERE id = ?',
      ),
      insertEvent: db.prepare<[NewEvent & { sessionId: string; now: string }]>(
        `INSERT INTO widget_events (session_id, type, occurred_at, data, received_at)
         VALUES (@sessionId, @type, @occurredAt, @data, @now)`,
      ),
      insertLead: db.prepare<[string, string, string, string | null, string, string | null, string], LeadRow>(
        `INSERT INTO widget_leads (session_id, name, email, message, consent_at, page_url, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id, name, email, message, created_at`,
      ),
      setTyping: db.prepare<[string | null, string]>('UPDATE widget_sessions SET typing_at = ? WHERE id = ?'),
      upsertSatisfaction: db.prepare<
        [{ sessionId: string; rating: number; comment: string | null; now: string }],
        SatisfactionRow
      >(
        `INSERT INTO widget_satisfaction (session_id, rating, comment, created_at, updated_at)
         VALUES (@sessionId, @rating, @comment, @now, @now)
         ON CONFLICT (session_id) DO UPDATE SET rating = excluded.rating, comment = excluded.comment,
           updated_at = excluded.updated_at
         RETURNING rating, comment, updated_at`,
      ),
      deleteSession: db.prepare<[string]>('DELETE FROM widget_sessions WHERE id = ?'),
      deleteEventsBefore: db.prepare<[string, number]>(
        `DELETE FROM widget_events WHERE id IN
           (SELECT id FROM widget_events WHERE received_at < ? ORDER BY received_at LIMIT ?)`,
      ),
    };
    const s = this.#s;
    this.#insertEvents = db.transaction((sessionId: string, events: readonly NewEvent[]) => {
      const at = now();
      for (const e of events) s.insertEvent.run({ sessionId, ...e, now: at });
    });
    // Messages, events, leads and the rating go with the session (ON DELETE CASCADE).
    this.#erase = db.transaction((sessionId: string) => s.deleteSession.run(sessionId).changes > 0);
    this.#clear = db.transaction((sessionId: string) => {
      s.resetHuman.run(sessionId);
      return s.deleteMessages.run(sessionId).changes;
    });
    this.#requestHuman = db.transaction((sessionId: string, notice: string) => {
      const at = now();
      if (s.markHuman.run(at, sessionId).changes === 0) {
        return { requestedAt: s.humanRequestedAt.get(sessionId)?.at ?? at, message: null };
      }
      return { requestedAt: at, message: s.insertMessage.get(sessionId, 'system', notice, at)! };
    });
  }

  workspace(name: string): { id: number; name: string } | undefined {
    return findWorkspace(this.#db, name);
  }

  /** Whether the website is one of the workspace owner's (another owner's is as unknown as a missing one). */
  isOwnersWebsite(websiteId: number, workspaceId: number): boolean {
    return isWorkspaceOwnersWebsite(this.#db, websiteId, workspaceId);
  }

  session(id: string): SessionRow | undefined {
    const row = this.#s.session.get(id);
    // The workspace's name comes from the accounts' repository (its table's one home).
    const workspaceName = row && workspaceNameOf(this.#db, row.workspace_id);
    return row && workspaceName !== undefined ? { ...row, workspace_name: workspaceName } : undefined;
  }

  createSession(id: string, workspaceId: number, place: SessionPlace): void {
    this.#s.insertSession.run({ id, workspaceId, ...this.#place(place), now: now() });
  }

  touchSession(id: string, place: SessionPlace): void {
    this.#s.touchSession.run({ id, ...this.#place(place), now: now() });
  }

  #place(place: SessionPlace): PlaceParams {
    return {
      websiteId: place.websiteId ?? null,
      pageUrl: place.pageUrl ?? null,
      locale: place.locale ?? null,
    };
  }

  addMessage(sessionId: string, sender: MessageRow['sender'], body: string): MessageRow {
    return this.#s.insertMessage.get(sessionId, sender, body, now())!;
  }

  messagesAfter(sessionId: string, afterId: number, limit: number): MessageRow[] {
    return this.#s.messagesAfter.all(sessionId, afterId, limit);
  }

  /** The highest message id stored (0: none). */
  maxMessageId(): number {
    return this.#s.maxMessageId.get()?.id ?? 0;
  }

  /**
   * In one read: up to `limit` messages of any session stored after `afterId`, in id order, and
   * which of `sessionIds` no longer exist (erased, by this process or another).
   */
  pollStreams(
    afterId: number,
    sessionIds: readonly string[],
    limit: number,
  ): { messages: SessionMessageRow[]; gone: string[] } {
    const messages: SessionMessageRow[] = [];
    const gone: string[] = [];
    const rows = this.#s.pollStreams.all({ after: afterId, limit, sessions: JSON.stringify(sessionIds) });
    for (const { id, session_id, sender, body, created_at } of rows) {
      if (id === null) gone.push(session_id);
      else messages.push({ id, sender, body, created_at, session_id });
    }
    messages.sort((a, b) => a.id - b.id);
    return { messages, gone };
  }

  lastMessageId(sessionId: string): number {
    return this.#s.lastMessageId.get(sessionId)?.id ?? 0;
  }

  messagePage(sessionId: string, page: number, perPage: number): { rows: MessageRow[]; total: number } {
    const rows = this.#s.messagePage.all(sessionId, perPage, (page - 1) * perPage);
    return { rows, total: this.countMessages(sessionId) };
  }

  countMessages(sessionId: string): number {
    return this.#s.messageCount.get(sessionId)!.n;
  }

  /** Deletes the conversation's messages and its human request; returns how many messages went. */
  clearConversation(sessionId: string): number {
    return this.#clear.immediate(sessionId);
  }

  /** Marks the conversation for a human; the notice is stored once, on the first request. */
  requestHuman(sessionId: string, notice: string): { requestedAt: string; message: MessageRow | null } {
    return this.#requestHuman.immediate(sessionId, notice);
  }

  addEvents(sessionId: string, events: readonly NewEvent[]): void {
    this.#insertEvents.immediate(sessionId, events);
  }

  addLead(
    sessionId: string,
    lead: { name: string; email: string; message: string | undefined },
    pageUrl: string | null,
  ): LeadRow {
    const at = now();
    return this.#s.insertLead.get(sessionId, lead.name, lead.email, lead.message ?? null, at, pageUrl, at)!;
  }

  setTyping(sessionId: string, typing: boolean): void {
    this.#s.setTyping.run(typing ? now() : null, sessionId);
  }

  rate(sessionId: string, rating: number, comment: string | undefined): SatisfactionRow {
    return this.#s.upsertSatisfaction.get({ sessionId, rating, comment: comment ?? null, now: now() })!;
  }

  coupon(workspaceId: number, code: string): CouponRow | undefined {
    return findCoupon(this.#db, workspaceId, code);
  }

  /** Deletes up to `limit` raw events received before `before` (ISO); returns how many went. */
  deleteEventsBefore(before: string, limit: number): number {
    return this.#s.deleteEventsBefore.run(before, limit).changes;
  }

  /** Erases the session and everything it holds; false when it was already gone. */
  erase(sessionId: string): boolean {
    return this.#erase.immediate(sessionId);
  }
}
