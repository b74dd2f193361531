import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.js';
import { prepared } from '../db/statements.js';
import { bearerToken } from '../credentials/bearer.js';
import { sha256 } from '../credentials/digest.js';
import { HttpError } from './errors.js';
import { nowIso as now } from '../db/timestamps.js';

/** Users of the websites and reports APIs, and their API keys. A key is shown once; only its SHA-256 is kept. */

export function newApiKey(): string {
  return `tg_${randomBytes(24).toString('base64url')}`;
}

/** Creates a user with a new API key; returns the key, which is never stored in clear. */
export function createUser(db: Db, name: string, key = newApiKey()): { userId: number; key: string } {
  const create = db.transaction(() => {
    const userId = Number(
      prepared<[string, string]>(db, 'INSERT INTO users (name, created_at) VALUES (?, ?)').run(name, now())
        .lastInsertRowid,
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

/**
 * Requires `Authorization: Bearer <API key>` on every route of `app` but the public ones; sets
 * request.userId. An unknown path stays a 404, as in the originals.
 */
export function requireApiKey(app: FastifyInstance, db: Db): void {
  app.decorateRequest('userId', 0);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (request.is404 || request.routeOptions.config.public) return;
    const key = bearerToken(request.headers.authorization);
    const userId = key === undefined ? undefined : userForKey(db, key);
    if (userId === undefined) throw new HttpError(401, 'Unauthenticated.', 'unauthenticated');
    request.userId = userId;
  });
}
