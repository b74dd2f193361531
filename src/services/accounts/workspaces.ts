import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../../db/database.js';
import { prepared } from '../../db/statements.js';
import { sha256 } from '../../credentials/digest.js';
import {
  formatWorkspaceToken,
  parseWorkspaceToken,
  type TokenFacts,
  type WorkspaceTokenStore,
} from '../../credentials/workspace-token.js';
import { nowIso as now } from '../../db/timestamps.js';
import { firstUserId, lastUsedIsStale, recordUse } from './accounts.js';

/**
 * Workspaces, each owned by a user (the widget attributes sessions only to that user's websites),
 * and their API tokens ("<id>|<secret>"; only the secret's SHA-256 is stored).
 */

export interface Workspace {
  readonly id: number;
  readonly name: string;
}

export function findWorkspace(db: Db, name: string): Workspace | undefined {
  return prepared<[string], Workspace>(db, 'SELECT id, name FROM workspaces WHERE name = ?').get(name);
}

/** The workspaces a user owns, by name (the widget's inbox lists them). */
export function workspacesOf(db: Db, user: number): Workspace[] {
  return prepared<[number], Workspace>(
    db,
    'SELECT id, name FROM workspaces WHERE user_id = ? ORDER BY name',
  ).all(user);
}

/** A workspace asked for on behalf of a user while another user owns it: it keeps its owner. */
export class WorkspaceOwnerError extends Error {
  constructor(
    readonly workspace: string,
    readonly owner: number,
    readonly requested: number,
  ) {
    super(`workspace "${workspace}" belongs to user ${owner}, not to user ${requested}`);
  }
}

/** The workspace's owner: undefined when there is no such workspace, null when it has no owner yet. */
export function workspaceOwner(db: Db, name: string): number | null | undefined {
  return prepared<[string], { user_id: number | null }>(
    db,
    'SELECT user_id FROM workspaces WHERE name = ?',
  ).get(name)?.user_id;
}

/**
 * The workspace of this name, created if new. Its owner: `owner`, else the first user (none while
 * there are no users). An existing workspace keeps its owner; asking for it on behalf of another
 * user throws WorkspaceOwnerError. One without an owner takes the one given (or the first user).
 */
export function ensureWorkspace(db: Db, name: string, owner?: number): Workspace {
  const ensure = db.transaction(() => {
    prepared<[string, number | null, string]>(
      db,
      `INSERT INTO workspaces (name, user_id, created_at) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET user_id = coalesce(workspaces.user_id, excluded.user_id)`,
    ).run(name, owner ?? firstUserId(db) ?? null, now());
    const row = prepared<[string], { id: number; name: string; user_id: number | null }>(
      db,
      'SELECT id, name, user_id FROM workspaces WHERE name = ?',
    ).get(name)!;
    if (owner !== undefined && row.user_id !== owner)
      throw new WorkspaceOwnerError(name, row.user_id!, owner);
    return { id: row.id, name: row.name };
  });
  return ensure.immediate();
}

/**
 * Gives the workspaces without an owner (made before workspaces had owners, while there were no
 * users) to the first user; returns how many. Run once the bootstrap users exist.
 */
export function adoptOrphanWorkspaces(db: Db): number {
  const first = firstUserId(db);
  if (first === undefined) return 0;
  return prepared<[number]>(db, 'UPDATE workspaces SET user_id = ? WHERE user_id IS NULL').run(first).changes;
}

/** The owner of the workspace with this id: undefined when there is none, or it has no owner. */
export function workspaceOwnerById(db: Db, id: number): number | undefined {
  return (
    prepared<[number], { user_id: number | null }>(db, 'SELECT user_id FROM workspaces WHERE id = ?').get(id)
      ?.user_id ?? undefined
  );
}

/** The name of the workspace with this id, or undefined. */
export function workspaceName(db: Db, id: number): string | undefined {
  return prepared<[number], { name: string }>(db, 'SELECT name FROM workspaces WHERE id = ?').get(id)?.name;
}

/**
 * Issues a token for the workspace (created if new, for `owner` or else the first user; see
 * ensureWorkspace). The returned token is shown once.
 */
export function createWorkspaceToken(
  db: Db,
  workspaceName: string,
  owner?: number,
): { id: string; token: string } {
  const id = randomBytes(6).toString('hex');
  const secret = randomBytes(30).toString('base64url');
  return { id, token: insertToken(db, workspaceName, id, secret, owner) };
}

function insertToken(db: Db, workspaceName: string, id: string, secret: string, owner?: number): string {
  db.transaction(() => {
    const workspace = ensureWorkspace(db, workspaceName, owner);
    prepared<[string, number, Buffer, string]>(
      db,
      'INSERT INTO workspace_tokens (id, workspace_id, secret_hash, created_at) VALUES (?, ?, ?, ?)',
    ).run(id, workspace.id, sha256(secret), now());
  }).immediate();
  return formatWorkspaceToken(id, secret);
}

/**
 * Ensures the given "<id>|<secret>" token exists (unrevoked) for the workspace. A new workspace
 * goes to the first user; an existing one keeps its owner.
 */
export function ensureWorkspaceToken(db: Db, token: string, workspaceName: string): void {
  const parsed = parseWorkspaceToken(token);
  if (!parsed) throw new Error('a workspace token has the form "<id>|<secret>"');
  db.transaction(() => {
    const row = prepared<[string], { secret_hash: Buffer }>(
      db,
      'SELECT secret_hash FROM workspace_tokens WHERE id = ?',
    ).get(parsed.id);
    if (!row) return void insertToken(db, workspaceName, parsed.id, parsed.secret);
    const workspace = ensureWorkspace(db, workspaceName);
    prepared<[Buffer, number, string]>(
      db,
      'UPDATE workspace_tokens SET secret_hash = ?, workspace_id = ?, revoked_at = NULL WHERE id = ?',
    ).run(sha256(parsed.secret), workspace.id, parsed.id);
  }).immediate();
}

/** Revokes a token; false when no live token has that id. */
export function revokeWorkspaceToken(db: Db, id: string): boolean {
  return (
    prepared<[string, string]>(
      db,
      'UPDATE workspace_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
    ).run(now(), id).changes === 1
  );
}

/**
 * The workspace a live token with this id and secret belongs to; the hashes are compared in
 * constant time. A use is recorded (last_used_at, to the minute) unless `touch` is false.
 */
export function workspaceForToken(db: Db, id: string, secret: string, touch = true): Workspace | undefined {
  const row = prepared<
    [string],
    { secret_hash: Buffer; id: number; name: string; last_used_at: string | null }
  >(
    db,
    `SELECT t.secret_hash, t.last_used_at, w.id, w.name FROM workspace_tokens t
       JOIN workspaces w ON w.id = t.workspace_id
       WHERE t.id = ? AND t.revoked_at IS NULL`,
  ).get(id);
  if (!row || !timingSafeEqual(row.secret_hash, sha256(secret))) return undefined;
  if (touch && lastUsedIsStale(row.last_used_at, Date.now())) {
    recordUse(() =>
      prepared<[string, string]>(db, 'UPDATE workspace_tokens SET last_used_at = ? WHERE id = ?').run(
        now(),
        id,
      ),
    );
  }
  return { id: row.id, name: row.name };
}

/** A workspace token as `tollgate tokens list` shows it: never its secret. */
export interface TokenSummary {
  readonly id: string;
  readonly workspace: string;
  /** The workspace's owner (a user id), or null. */
  readonly user_id: number | null;
  readonly created_at: string;
  readonly last_used_at: string | null;
  readonly revoked_at: string | null;
}

/** Every workspace token, revoked ones too, by workspace then creation. */
export function listWorkspaceTokens(db: Db): TokenSummary[] {
  return prepared<[], TokenSummary>(
    db,
    `SELECT t.id, w.name AS workspace, w.user_id, t.created_at, t.last_used_at, t.revoked_at
     FROM workspace_tokens t JOIN workspaces w ON w.id = t.workspace_id
     ORDER BY w.name, t.created_at, t.id`,
  ).all();
}

/** The gateway's wp-plugin key source when identity.workspaceTokens.source is "database". */
export class DatabaseTokenStore implements WorkspaceTokenStore {
  /** `touch`: record uses (false for `explain`, which asks what a request would get but sends none). */
  constructor(
    private readonly db: Db,
    private readonly touch = true,
  ) {}

  async verify(id: string, secret: string): Promise<boolean> {
    return workspaceForToken(this.db, id, secret, this.touch) !== undefined;
  }

  /** The token's workspace (its name) and that workspace's plan (the gateway's tiers). */
  async facts(id: string): Promise<TokenFacts | undefined> {
    const row = prepared<[string], { name: string; plan: string | null }>(
      this.db,
      `SELECT w.name, w.plan FROM workspace_tokens t JOIN workspaces w ON w.id = t.workspace_id
         WHERE t.id = ? AND t.revoked_at IS NULL`,
    ).get(id);
    return row && { workspace: row.name, plan: row.plan ?? undefined };
  }
}

/** Sets (or, with undefined, clears) a workspace's plan; false when there is no such workspace. */
export function setWorkspacePlan(db: Db, workspace: string, plan: string | undefined): boolean {
  return (
    prepared<[string | null, string]>(db, 'UPDATE workspaces SET plan = ? WHERE name = ?').run(
      plan ?? null,
      workspace,
    ).changes > 0
  );
}
