import type { Db } from '../../../db/database.js';
import { prepared } from '../../../db/statements.js';

/** The widget_leads table: contact details a visitor left, with consent. */

export interface LeadRow {
  readonly id: number;
  readonly name: string;
  readonly email: string;
  readonly message: string | null;
  readonly created_at: string;
}

/** A lead as its workspace's owner reads it. */
export interface OwnerLeadRow extends LeadRow {
  readonly conversation_id: string;
  readonly page_url: string | null;
  readonly consent_at: string;
}

export interface NewLead {
  readonly sessionId: string;
  readonly workspaceId: number;
  readonly name: string;
  readonly email: string;
  readonly message: string | null;
  readonly pageUrl: string | null;
  readonly now: string;
}

export function insertLead(db: Db, lead: NewLead): LeadRow {
  return prepared<[NewLead], LeadRow>(
    db,
    `INSERT INTO widget_leads (session_id, workspace_id, name, email, message, consent_at, page_url, created_at)
     VALUES (@sessionId, @workspaceId, @name, @email, @message, @now, @pageUrl, @now)
     RETURNING id, name, email, message, created_at`,
  ).get(lead)!;
}

const OWNER_COLUMNS =
  'id, session_id AS conversation_id, name, email, message, page_url, consent_at, created_at';

/** A page of the workspace's leads, newest first, and how many there are. */
export function leadPage(
  db: Db,
  workspaceId: number,
  limit: number,
  offset: number,
): { rows: OwnerLeadRow[]; total: number } {
  const rows = prepared<[number, number, number], OwnerLeadRow>(
    db,
    `SELECT ${OWNER_COLUMNS} FROM widget_leads WHERE workspace_id = ? ORDER BY id DESC LIMIT ? OFFSET ?`,
  ).all(workspaceId, limit, offset);
  const { n } = prepared<[number], { n: number }>(
    db,
    'SELECT count(*) AS n FROM widget_leads WHERE workspace_id = ?',
  ).get(workspaceId)!;
  return { rows, total: n };
}

/** Up to `limit` of the workspace's leads with an id below `beforeId`, newest first (the export's chunks). */
export function leadsBefore(db: Db, workspaceId: number, beforeId: number, limit: number): OwnerLeadRow[] {
  return prepared<[number, number, number], OwnerLeadRow>(
    db,
    `SELECT ${OWNER_COLUMNS} FROM widget_leads WHERE workspace_id = ? AND id < ? ORDER BY id DESC LIMIT ?`,
  ).all(workspaceId, beforeId, limit);
}

/** The leads of one session, newest first. */
export function sessionLeads(db: Db, sessionId: string): OwnerLeadRow[] {
  return prepared<[string], OwnerLeadRow>(
    db,
    `SELECT ${OWNER_COLUMNS} FROM widget_leads WHERE session_id = ? ORDER BY id DESC`,
  ).all(sessionId);
}
