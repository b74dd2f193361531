import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../../db/database.js';
import { prepared } from '../../db/statements.js';
import { bearerToken } from '../../credentials/bearer.js';
import { sha256 } from '../../credentials/digest.js';
import { HttpError } from '../kit/errors.js';
import { nowIso as now } from '../../db/timestamps.js';

/** Users of the websites and reports APIs, and their API keys. A key is shown once; only its SHA-256 is kept. */

export function newApiKey(): string {
  return `tg_${randomBytes(24).toString('base64url')}`;
}

/** An address nodemailer can send to: local@domain, no whitespace, no brackets or commas, at most 254 characters. */
export function isEmailAddress(value: string): boolean {
  return value.length <= 254 && /^[^\s@<>,;"()[\]]+@[^\s@<>,;"()[\]]+\.[^\s@<>,;"()[\]]+$/.test(value);
}

/**
 * Creates a user with a new API key (and an optional e-mail address, the reports' recipient);
 * returns the key, which is never stored in clear.
 */
export function createUser(
  db: Db,
  name: string,
  key = newApiKey(),
  email: string | null = null,
): { userId: number; key: string } {
  const create = db.transaction(() => {
    const userId = Number(
      prepared<[string, string | null, string]>(
        db,
        'INSERT INTO users (name, email, created_at) VALUES (?, ?, ?)',
      ).run(name, email, now()).lastInsertRowid,
    );
    prepared<[number, Buffer, string]>(
      db,
      'INSERT INTO api_keys (user_id, key_hash, created_at) VALUES (?, ?, ?)',
    ).run(userId, sha256(key), now());
    return userId;
  });
  return { userId: create.immediate(), key };
}

/** A stored "last used" time is rewritten only once it is this old: one write a minute per key, not per request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Records a use, best effort: a database busy with another process's write (past its busy
 * timeout) skips this minute's record rather than failing the request it authenticates.
 */
export function recordUse(write: () => void): void {
  try {
    write();
  } catch (err) {
    if (!String((err as { code?: unknown }).code).startsWith('SQLITE_BUSY')) throw err;
  }
}

/** Whether a "last used" time (ISO, or null for never) is due to be rewritten at `nowMs`. */
export function lastUsedIsStale(lastUsed: string | null, nowMs: number): boolean {
  return lastUsed === null || Date.parse(lastUsed) <= nowMs - LAST_USED_RESOLUTION_MS;
}

/**
 * The owner of an API key, or undefined. The stored and presented hashes are compared in constant
 * time. A use is recorded (last_used_at, to the minute) unless `touch` is false.
 */
export function userForKey(db: Db, key: string, touch = true): number | undefined {
  const presented = sha256(key);
  const row = prepared<
    [Buffer],
    { id: number; user_id: number; key_hash: Buffer; last_used_at: string | null }
  >(db, 'SELECT id, user_id, key_hash, last_used_at FROM api_keys WHERE key_hash = ?').get(presented);
  if (!row || !timingSafeEqual(row.key_hash, presented)) return undefined;
  if (touch && lastUsedIsStale(row.last_used_at, Date.now())) {
    recordUse(() =>
      prepared<[string, number]>(db, 'UPDATE api_keys SET last_used_at = ? WHERE id = ?').run(now(), row.id),
    );
  }
  return row.user_id;
}

/**
 * A short digest of a stored key hash, kept in a statistics-page session: rotating the key (a new
 * hash) ends every page session signed in with the old one.
 */
export function keyTag(keyHash: Buffer): string {
  return createHash('sha256').update(keyHash).digest('base64url').slice(0, 16);
}

/** The tag of the presented API key (see keyTag). */
export const presentedKeyTag = (key: string): string => keyTag(sha256(key));

/** Whether `tag` is the tag of one of the user's current API keys (false for no such user). */
export function userHasKeyTag(db: Db, userId: number, tag: string): boolean {
  return prepared<[number], { key_hash: Buffer }>(db, 'SELECT key_hash FROM api_keys WHERE user_id = ?')
    .all(userId)
    .some((row) => keyTag(row.key_hash) === tag);
}

/** A user as `tollgate users list` shows it: never a key. */
export interface UserSummary {
  readonly id: number;
  readonly name: string;
  readonly email: string | null;
  readonly created_at: string;
  /** The latest use of any of its API keys; null when never used. */
  readonly last_used_at: string | null;
}

export function listUsers(db: Db): UserSummary[] {
  return prepared<[], UserSummary>(
    db,
    `SELECT u.id, u.name, u.email, u.created_at, max(k.last_used_at) AS last_used_at
     FROM users u LEFT JOIN api_keys k ON k.user_id = u.id GROUP BY u.id ORDER BY u.id`,
  ).all();
}

/** The account the API shows its owner (`GET /api/v1/account`), or undefined. */
export function findUser(
  db: Db,
  id: number,
): { id: number; name: string; email: string | null; created_at: string } | undefined {
  return prepared<[number], { id: number; name: string; email: string | null; created_at: string }>(
    db,
    'SELECT id, name, email, created_at FROM users WHERE id = ?',
  ).get(id);
}

export function userExists(db: Db, id: number): boolean {
  return prepared<[number], { one: 1 }>(db, 'SELECT 1 AS one FROM users WHERE id = ?').get(id) !== undefined;
}

/** The first user (lowest id): the owner a workspace gets when none is named. */
export function firstUserId(db: Db): number | undefined {
  return prepared<[], { id: number | null }>(db, 'SELECT min(id) AS id FROM users').get()!.id ?? undefined;
}

/** The user's e-mail address (the reports' recipient), or null. */
export function userEmail(db: Db, id: number): string | null {
  return (
    prepared<[number], { email: string | null }>(db, 'SELECT email FROM users WHERE id = ?').get(id)?.email ??
    null
  );
}

/** Whether any of the user's API keys is one of `keys` (a key the config bootstraps at every start). */
export function hasAnyKey(db: Db, userId: number, keys: readonly string[]): boolean {
  return keys.some((key) => userForKey(db, key, false) === userId);
}

/**
 * Replaces every API key of the user with a new one, in one transaction: the old keys stop
 * working at once. Returns the new key (shown once), or undefined when there is no such user.
 */
export function rotateUserKey(db: Db, userId: number, key = newApiKey()): string | undefined {
  const rotate = db.transaction(() => {
    if (!userExists(db, userId)) return undefined;
    prepared<[number]>(db, 'DELETE FROM api_keys WHERE user_id = ?').run(userId);
    prepared<[number, Buffer, string]>(
      db,
      'INSERT INTO api_keys (user_id, key_hash, created_at) VALUES (?, ?, ?)',
    ).run(userId, sha256(key), now());
    return key;
  });
  return rotate.immediate();
}

/**
 * Ensures one user per bootstrap key. On a first start with neither users nor bootstrap keys,
 * creates user "admin" and returns it with its key (to be shown once: the next start finds the user).
 */
export function bootstrapUsers(db: Db, keys: readonly string[]): { userId: number; key: string } | undefined {
  const ensure = db.transaction(() => {
    for (const [i, key] of keys.entries()) {
      if (userForKey(db, key, false) === undefined) createUser(db, `bootstrap-${i + 1}`, key);
    }
    if (keys.length > 0) return undefined;
    const { n } = prepared<[], { n: number }>(db, 'SELECT count(*) AS n FROM users').get()!;
    return n === 0 ? createUser(db, 'admin') : undefined;
  });
  return ensure.immediate();
}

declare module 'fastify' {
  interface FastifyRequest {
    userId: number;
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route anyone may call (the OpenAPI document). */
    public?: boolean;
  }
}

/** A non-empty string field `api_token` of a query or body, else undefined. */
function apiTokenField(fields: unknown): string | undefined {
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return undefined;
  const value = (fields as Record<string, unknown>).api_token;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The API key a request presents, where Laravel's token guard looks for it, in its order: the
 * query's `api_token`, the body's `api_token` field (form, multipart or JSON), then
 * `Authorization: Bearer` (the documented way).
 */
export function presentedApiKey(request: FastifyRequest): string | undefined {
  return (
    apiTokenField(request.query) ?? apiTokenField(request.body) ?? bearerToken(request.headers.authorization)
  );
}

/**
 * Requires an API key (see presentedApiKey) on every route of `app` but the public ones; sets
 * request.userId. Checked once the body is read, since the key may be one of its fields. An
 * unknown path stays a 404, as in the originals.
 */
export function requireApiKey(app: FastifyInstance, db: Db): void {
  app.decorateRequest('userId', 0);
  app.addHook('preValidation', async (request: FastifyRequest) => {
    if (request.is404 || request.routeOptions.config.public) return;
    const key = presentedApiKey(request);
    const userId = key === undefined ? undefined : userForKey(db, key);
    if (userId === undefined) throw new HttpError(401, 'Unauthenticated.', 'unauthenticated');
    request.userId = userId;
  });
}
