import { createPublicKey, randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createLocalJWKSet, errors, exportJWK, jwtVerify, type JWK, type JWTVerifyGetKey } from 'jose';
import { LRUCache } from 'lru-cache';
import type { JwtConfig } from '../config/schema.js';
import { bearerToken } from './workspace-token.js';

export type JwtOutcome =
  | { readonly ok: true; readonly session: string }
  | { readonly ok: false; readonly reason: 'missing' | 'expired' | 'invalid' };

type VerifyKey = Uint8Array | JWTVerifyGetKey;

/** The visitor token travels as "X-Widget-Token: <jwt>" or "Authorization: Bearer <jwt>" (the first wins). */
export function visitorToken(
  authorization: string | undefined,
  widgetToken: string | undefined,
): string | undefined {
  return widgetToken?.trim() || bearerToken(authorization);
}

/** Verifies visitor-session JWTs with jose; a verified token's session is cached until it expires. */
export class VisitorJwtVerifier {
  readonly #key: VerifyKey;
  readonly #cfg: JwtConfig;
  readonly #cache = new LRUCache<string, { session: string; expMs: number }>({ max: 10_000 });

  private constructor(key: VerifyKey, cfg: JwtConfig) {
    this.#key = key;
    this.#cfg = cfg;
  }

  static async create(cfg: JwtConfig): Promise<VisitorJwtVerifier> {
    return new VisitorJwtVerifier(await loadKey(cfg), cfg);
  }

  async verify(token: string | undefined): Promise<JwtOutcome> {
    if (!token) return { ok: false, reason: 'missing' };
    const now = Date.now();
    const cached = this.#cache.get(token);
    if (cached) {
      if (cached.expMs + this.#cfg.clockTolerance > now) return { ok: true, session: cached.session };
      this.#cache.delete(token);
      return { ok: false, reason: 'expired' };
    }
    try {
      const { payload } = await jwtVerify(token, this.#key as Uint8Array, {
        algorithms: this.#cfg.algorithms,
        issuer: this.#cfg.issuer,
        audience: this.#cfg.audience,
        clockTolerance: this.#cfg.clockTolerance / 1000,
        requiredClaims: ['exp'], // a visitor session token must expire
      });
      const session = payload[this.#cfg.sessionClaim];
      if (typeof session !== 'string' && typeof session !== 'number') return { ok: false, reason: 'invalid' };
      const expMs = (payload.exp ?? 0) * 1000;
      this.#cache.set(token, { session: String(session), expMs });
      return { ok: true, session: String(session) };
    } catch (err) {
      return { ok: false, reason: err instanceof errors.JWTExpired ? 'expired' : 'invalid' };
    }
  }
}

async function loadKey(cfg: JwtConfig): Promise<VerifyKey> {
  if (cfg.jwksFile) {
    return createLocalJWKSet(JSON.parse(await readFile(cfg.jwksFile, 'utf8')) as { keys: JWK[] });
  }
  if (cfg.publicKeys.length > 0) {
    const keys = await Promise.all(
      cfg.publicKeys.map(async (file) => exportJWK(createPublicKey(await readFile(file, 'utf8')))),
    );
    return createLocalJWKSet({ keys });
  }
  return new TextEncoder().encode(cfg.secret || (await readOrCreateSecret(cfg.secretFile)));
}

/**
 * Reads the HS256 secret file, creating it with a random secret when absent, so restarts keep
 * tokens valid. Several processes may start at once: the secret is written to a private temp file
 * and linked into place (atomic, and refused if another process linked first), so no reader ever
 * sees a half-written file.
 */
export async function readOrCreateSecret(file: string): Promise<string> {
  if (!file) throw new Error('identity.jwt needs one of secret, secretFile, publicKeys or jwksFile');
  const existing = await readSecret(file);
  if (existing !== undefined) return existing;
  await mkdir(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temp, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(temp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // Another process linked its secret first: use theirs.
  } finally {
    await unlink(temp);
  }
  const secret = await readSecret(file);
  if (secret === undefined) throw new Error(`the JWT secret file ${file} is empty`);
  return secret;
}

/** The file's secret, or undefined when the file does not exist; an empty file is an error. */
async function readSecret(file: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const secret = text.trim();
  if (!secret) throw new Error(`the JWT secret file ${file} is empty: delete it to have a new secret made`);
  return secret;
}
