import { createPublicKey, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
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

/** Reads the HS256 secret file, creating it with a random secret when absent, so restarts keep tokens valid. */
export async function readOrCreateSecret(file: string): Promise<string> {
  if (!file) throw new Error('identity.jwt needs one of secret, secretFile, publicKeys or jwksFile');
  try {
    const existing = (await readFile(file, 'utf8')).trim();
    if (existing) return existing;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(dirname(file), { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  try {
    await writeFile(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return (await readFile(file, 'utf8')).trim();
    throw err;
  }
}
