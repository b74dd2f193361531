import { randomBytes, timingSafeEqual } from 'node:crypto';
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

/** The owner of an API key, or undefined. The stored and presented hashes are compared in constant time. */
export function userForKey(db: Db, key: string): number | undefined {
  const presented = sha256(key);
  const row = prepared<[Buffer], { user_id: number; key_hash: Buffer }>(
    db,
    'SELECT user_id, key_hash FROM api_keys WHERE key_hash = ?',
  ).get(presented);
  return row && timingSafeEqual(row.key_hash, presented) ? row.user_id : undefined;
}

/**
 * Ensures one user per bootstrap key. On a first start with neither users nor bootstrap keys,
 * creates user "admin" and returns it with its key (to be shown once: the next start finds the user).
 */
export function bootstrapUsers(db: Db, keys: readonly string[]): { userId: number; key: string } | undefined {
  const ensure = db.transaction(() => {
    for (const [i, key] of keys.entries()) {
      if (userForKey(db, key) === undefined) createUser(db, `bootstrap-${i + 1}`, key);
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
