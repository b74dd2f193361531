import { createPublicKey, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  createLocalJWKSet,
  errors,
  exportJWK,
  jwtVerify,
  SignJWT,
  type JWK,
  type JWTVerifyGetKey,
} from 'jose';
import { LRUCache } from 'lru-cache';
import { bearerToken } from './bearer.js';
import { readOrCreateSecret } from './secret-file.js';

/**
 * How visitor-session JWTs are signed and verified (the gateway's identity.jwt entry). The gateway
 * verifies with it; the embedded widget signs with the very same entry, so the two cannot drift.
 */
export interface VisitorJwtSettings {
  /** HS256/384/512 shared secret; empty: the secret file. */
  readonly secret: string;
  /** Holds the shared secret; created with a random one when missing. */
  readonly secretFile: string;
  /** PEM files (SPKI) to verify RS/ES/EdDSA tokens with. */
  readonly publicKeys: readonly string[];
  /** A local JWKS JSON file to verify with. */
  readonly jwksFile: string;
  readonly algorithms: readonly string[];
  readonly issuer?: string | undefined;
  readonly audience?: string | undefined;
  /** The claim that names the visitor session. */
  readonly sessionClaim: string;
  /** Milliseconds. */
  readonly clockTolerance: number;
  /** Lifetime of the tokens signed, in milliseconds. */
  readonly ttl: number;
}

export type JwtOutcome =
  | { readonly ok: true; readonly session: string }
  | { readonly ok: false; readonly reason: 'missing' | 'expired' | 'invalid' };

export type VerifyKey = Uint8Array | JWTVerifyGetKey;

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
  readonly #settings: VisitorJwtSettings;
  readonly #cache = new LRUCache<string, { session: string; expMs: number }>({ max: 10_000 });

  private constructor(key: VerifyKey, settings: VisitorJwtSettings) {
    this.#key = key;
    this.#settings = settings;
  }

  static async create(settings: VisitorJwtSettings): Promise<VisitorJwtVerifier> {
    return new VisitorJwtVerifier(await verifyKey(settings), settings);
  }

  async verify(token: string | undefined): Promise<JwtOutcome> {
    if (!token) return { ok: false, reason: 'missing' };
    const s = this.#settings;
    const now = Date.now();
    const cached = this.#cache.get(token);
    if (cached) {
      if (cached.expMs + s.clockTolerance > now) return { ok: true, session: cached.session };
      this.#cache.delete(token);
      return { ok: false, reason: 'expired' };
    }
    try {
      const { payload } = await jwtVerify(token, this.#key as Uint8Array, {
        algorithms: [...s.algorithms],
        issuer: s.issuer,
        audience: s.audience,
        clockTolerance: s.clockTolerance / 1000,
        requiredClaims: ['exp'], // a visitor session token must expire
      });
      const session = payload[s.sessionClaim];
      if (typeof session !== 'string' && typeof session !== 'number') return { ok: false, reason: 'invalid' };
      const expMs = (payload.exp ?? 0) * 1000;
      this.#cache.set(token, { session: String(session), expMs });
      return { ok: true, session: String(session) };
    } catch (err) {
      return { ok: false, reason: err instanceof errors.JWTExpired ? 'expired' : 'invalid' };
    }
  }
}

/** Signs visitor-session tokens with the shared secret the verifier of the same settings loads. */
export class VisitorJwtSigner {
  private constructor(
    private readonly key: Uint8Array,
    private readonly settings: VisitorJwtSettings,
    private readonly algorithm: string,
  ) {}

  /** `algorithm` must be an HMAC one (HS256/384/512): the caller checks that it can be signed with. */
  static async create(settings: VisitorJwtSettings, algorithm: string): Promise<VisitorJwtSigner> {
    return new VisitorJwtSigner(await sharedSecret(settings), settings, algorithm);
  }

  async sign(session: string): Promise<{ token: string; expiresAt: Date }> {
    const s = this.settings;
    // One clock read for both: two could straddle a second, and the token live a second short.
    const now = Date.now();
    const exp = Math.floor((now + s.ttl) / 1000);
    const jwt = new SignJWT({ [s.sessionClaim]: session })
      .setProtectedHeader({ alg: this.algorithm, typ: 'JWT' })
      .setIssuedAt(Math.floor(now / 1000))
      .setJti(randomUUID()) // every token is distinct, even two signed within one second
      .setExpirationTime(exp);
    if (s.issuer !== undefined) jwt.setIssuer(s.issuer);
    if (s.audience !== undefined) jwt.setAudience(s.audience);
    return { token: await jwt.sign(this.key), expiresAt: new Date(exp * 1000) };
  }
}

/** The key material of `settings` (jwksFile, then publicKeys, then the shared secret). */
export async function verifyKey(settings: VisitorJwtSettings): Promise<VerifyKey> {
  if (settings.jwksFile) {
    return createLocalJWKSet(JSON.parse(await readFile(settings.jwksFile, 'utf8')) as { keys: JWK[] });
  }
  if (settings.publicKeys.length > 0) {
    const keys = await Promise.all(
      settings.publicKeys.map(async (file) => exportJWK(createPublicKey(await readFile(file, 'utf8')))),
    );
    return createLocalJWKSet({ keys });
  }
  return sharedSecret(settings);
}

/** The secret, else the secret file's (created once): one key for both signer and verifier. */
async function sharedSecret(settings: VisitorJwtSettings): Promise<Uint8Array> {
  return new TextEncoder().encode(settings.secret || (await readOrCreateSecret(settings.secretFile)));
}
