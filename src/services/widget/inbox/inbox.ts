import type { Db } from '../../../db/database.js';
import { findWorkspace, workspaceOwner, type Workspace } from '../../accounts/workspaces.js';
import { csv, csvField } from '../../kit/csv.js';
import { HttpError } from '../../kit/errors.js';
import { addMessage } from '../conversation.js';
import { eventPage, type EventRow } from '../tables/events.js';
import { leadPage, leadsBefore, sessionLeads, type OwnerLeadRow } from '../tables/leads.js';
import { messagePage, messageSummaries, type MessageRow } from '../tables/messages.js';
import { ratingsOf, type SatisfactionRow } from '../tables/ratings.js';
import {
  conversationPage,
  findConversation,
  markOwnerRead,
  type ConversationRow,
} from '../tables/sessions.js';
import type { MessageNotifier } from '../message-notifier.js';

/** The owner's inbox, shared by its API and its page: what each reads and writes, no HTTP. */

export const NOT_FOUND_MESSAGE = 'Resource not found.';
const notFound = () => new HttpError(404, NOT_FOUND_MESSAGE, 'not_found');

/** The workspace of this name when `user` owns it; another owner's answers as a missing one (404). */
export function ownedWorkspace(db: Db, name: string, user: number): Workspace {
  const workspace = findWorkspace(db, name);
  if (!workspace || workspaceOwner(db, name) !== user) throw notFound();
  return workspace;
}

export interface Conversation {
  readonly id: string;
  readonly website_id: number | null;
  readonly page_url: string | null;
  readonly locale: string | null;
  readonly started_at: string;
  readonly last_message_at: string | null;
  readonly human_requested_at: string | null;
  readonly messages: number;
  readonly unread: number;
  readonly last_message: { readonly sender: MessageRow['sender']; readonly body: string } | null;
  readonly rating: number | null;
}

function conversations(db: Db, rows: readonly ConversationRow[]): Conversation[] {
  const summaries = messageSummaries(
    db,
    rows.map((r) => ({ id: r.id, readSeq: r.owner_read_seq })),
  );
  const ratings = ratingsOf(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => {
    const summary = summaries.get(r.id);
    return {
      id: r.id,
      website_id: r.website_id,
      page_url: r.page_url,
      locale: r.locale,
      started_at: r.created_at,
      last_message_at: r.last_message_at,
      human_requested_at: r.human_requested_at,
      messages: summary?.messages ?? 0,
      unread: summary?.unread ?? 0,
      last_message:
        summary?.last_sender && summary.last_body !== null
          ? { sender: summary.last_sender, body: summary.last_body }
          : null,
      rating: ratings.get(r.id)?.rating ?? null,
    };
  });
}

export interface Page<T> {
  readonly items: T[];
  readonly page: number;
  readonly per_page: number;
  readonly total: number;
}

/** The workspace's conversations (sessions with a message), newest activity first. */
export function listConversations(
  db: Db,
  workspaceId: number,
  page: number,
  perPage: number,
): Page<Conversation> {
  const { rows, total } = conversationPage(db, workspaceId, perPage, (page - 1) * perPage);
  return { items: conversations(db, rows), page, per_page: perPage, total };
}

/** One conversation of the workspace, with its rating and leads; 404 when not the workspace's. */
export function conversationDetail(
  db: Db,
  workspaceId: number,
  id: string,
): { conversation: Conversation; satisfaction: SatisfactionRow | null; leads: OwnerLeadRow[] } {
  const row = findConversation(db, workspaceId, id);
  if (!row) throw notFound();
  return {
    conversation: conversations(db, [row])[0]!,
    satisfaction: ratingsOf(db, [id]).get(id) ?? null,
    leads: sessionLeads(db, id),
  };
}

/** A page of the conversation's messages after `after`, oldest first; the owner has now read them. */
export function readMessages(
  db: Db,
  workspaceId: number,
  id: string,
  after: number,
  page: number,
  perPage: number,
): Page<MessageRow> {
  if (!findConversation(db, workspaceId, id)) throw notFound();
  const { rows, total } = messagePage(db, id, after, perPage, (page - 1) * perPage);
  const last = rows.at(-1);
  if (last) markOwnerRead(db, id, last.id);
  return { items: rows, page, per_page: perPage, total };
}

/** The owner's reply: an `agent` message, delivered to the visitor's open streams at once. */
export function postReply(
  db: Db,
  notifier: MessageNotifier,
  workspaceId: number,
  id: string,
  body: string,
): MessageRow {
  if (!findConversation(db, workspaceId, id)) throw notFound();
  const message = addMessage(db, id, 'agent', body);
  // The owner wrote it, so everything up to it is read.
  markOwnerRead(db, id, message.id);
  notifier.notify(id);
  return message;
}

export interface WidgetEvent {
  readonly id: number;
  readonly type: string;
  readonly occurred_at: string;
  readonly data: Record<string, unknown> | null;
  readonly received_at: string;
}

const widgetEvent = (row: EventRow): WidgetEvent => ({
  ...row,
  data: row.data === null ? null : (JSON.parse(row.data) as Record<string, unknown>),
});

export function listEvents(
  db: Db,
  workspaceId: number,
  id: string,
  page: number,
  perPage: number,
): Page<WidgetEvent> {
  if (!findConversation(db, workspaceId, id)) throw notFound();
  const { rows, total } = eventPage(db, id, perPage, (page - 1) * perPage);
  return { items: rows.map(widgetEvent), page, per_page: perPage, total };
}

export function listLeads(db: Db, workspaceId: number, page: number, perPage: number): Page<OwnerLeadRow> {
  const { rows, total } = leadPage(db, workspaceId, perPage, (page - 1) * perPage);
  return { items: rows, page, per_page: perPage, total };
}

export const LEAD_COLUMNS = [
  'id',
  'created_at',
  'name',
  'email',
  'message',
  'page_url',
  'consent_at',
  'conversation_id',
] as const;

const EXPORT_CHUNK = 500;

/** The workspace's leads as CSV, newest first, a chunk at a time (formula-safe: see kit/csv.ts). */
export function* leadsCsv(db: Db, workspaceId: number): Generator<string> {
  yield csv(LEAD_COLUMNS, []);
  for (let before = Number.MAX_SAFE_INTEGER; ;) {
    const rows = leadsBefore(db, workspaceId, before, EXPORT_CHUNK);
    if (rows.length === 0) return;
    yield rows.map((r) => LEAD_COLUMNS.map((c) => csvField(r[c] ?? '')).join(',') + '\r\n').join('');
    before = rows.at(-1)!.id;
  }
}
