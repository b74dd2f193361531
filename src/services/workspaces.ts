import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/database.js';
import { prepared } from '../db/statements.js';
import { sha256 } from '../identity/hash.js';
import { parseWorkspaceToken, type WorkspaceTokenStore } from '../identity/workspace-token.js';
import { nowIso as now } from '../db/timestamps.js';

/** Workspaces and their API tokens ("<id>|<secret>"; only the secret's SHA-256 is stored). */

export interface Workspace {
  readonly id: number;
  readonly name: string;
}

export function findWorkspace(db: Db, name: string): Workspace | undefined {
  return prepared(db, 'SELECT id, name FROM workspaces WHERE name = ?').get(name) as Workspace | undefined;
}

export function ensureWorkspace(db: Db, name: string): Workspace {
  prepared(db, 'INSERT INTO workspaces (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING').run(
    name,
    now(),
  );
  return findWorkspace(db, name)!;
}

/** Issues a token for the workspace (created if new). The returned token is shown once. */
export function createWorkspaceToken(db: Db, workspaceName: string): { id: string; token: string } {
  const id = randomBytes(6).toString('hex');
  const secret = randomBytes(30).toString('base64url');
  return { id, token: insertToken(db, workspaceName, id, secret) };
}

function insertToken(db: Db, workspaceName: string, id: string, secret: string): string {
  db.transaction(() => {
    const workspace = ensureWorkspace(db, workspaceName);
    prepared(
      db,
      'INSERT INTO workspace_tokens (id, workspace_id, secret_hash, created_at) VALUES (?, ?, ?, ?)',
    ).run(id, workspace.id, sha256(secret), now());
  }).immediate();
  return `${id}|${secret}`;
}

/** Ensures the given "<id>|<secret>" token exists (unrevoked) for the workspace. */
export function ensureWorkspaceToken(db: Db, token: string, workspaceName: string): void {
  const parsed = parseWorkspaceToken(token);
  if (!parsed) throw new Error('a workspace token has the form "<id>|<secret>"');
  db.transaction(() => {
    const row = prepared(db, 'SELECT secret_hash FROM workspace_tokens WHERE id = ?').get(parsed.id) as
      { secret_hash: Buffer } | undefined;
    if (!row) return void insertToken(db, workspaceName, parsed.id, parsed.secret);
    const workspace = ensureWorkspace(db, workspaceName);
    prepared(
      db,
      'UPDATE workspace_tokens SET secret_hash = ?, workspace_id = ?, revoked_at = NULL WHERE id = ?',
    ).run(sha256(parsed.secret), workspace.id, parsed.id);
  }).immediate();
}

/** Revokes a token; false when no live token has that id. */
export function revokeWorkspaceToken(db: Db, id: string): boolean {
  return (
    prepared(db, 'UPDATE workspace_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(
      now(),
      id,
    ).changes === 1
  );
}

/** The workspace a live token with this id and secret belongs to; the hashes are compared in constant time. */
export function workspaceForToken(db: Db, id: string, secret: string): Workspace | undefined {
  const row = prepared(
    db,
    `SELECT t.secret_hash, w.id, w.name FROM workspace_tokens t JOIN workspaces w ON w.id = t.workspace_id
       WHERE t.id = ? AND t.revoked_at IS NULL`,
  ).get(id) as { secret_hash: Buffer; id: number; name: string } | undefined;
  if (!row || !timingSafeEqual(row.secret_hash, sha256(secret))) return undefined;
  return { id: row.id, name: row.name };
}

/** The gateway's wp-plugin key source when identity.workspaceTokens.source is "database". */
export class DatabaseTokenStore implements WorkspaceTokenStore {
  constructor(private readonly db: Db) {}

  async verify(id: string, secret: string): Promise<boolean> {
    return workspaceForToken(this.db, id, secret) !== undefined;
  }
}
