/**
 * The credentials a tier is read from: a claim of a verified JWT (the visitor JWT, or a bearer JWT
 * verified with its own keys: a JWKS URL or file, PEM keys or a secret), cached per token until it
 * expires. A token that fails verification names no tier: the request gets the default tier.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { LRUCache } from 'lru-cache';
import { bearerToken } from '../credentials/bearer.js';
import {
  verifyKey,
  visitorToken,
  type VerifyKey,
  type VisitorJwtSettings,
} from '../credentials/visitor-jwt.js';
import type { TierJwtConfig } from '../config/schema.js';

/** What a verified JWT says: its tier claim and its subject (overrides "sub:<value>"). */
export interface TierClaims {
  readonly tier: string | undefined;
  readonly sub: string | undefined;
}

/** How long a token without exp is trusted before it is verified again. */
const NO_EXP_TTL_MS = 60_000;

const header = (h: IncomingHttpHeaders, name: string) => {
  const v = h[name];
  return Array.isArray(v) ? v.join(', ') : v;
};

const claimText = (v: unknown) =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;

export class TierJwtVerifier {
  readonly #cache = new LRUCache<string, TierClaims & { expMs: number }>({ max: 10_000 });

  private constructor(
    private readonly key: VerifyKey,
    private readonly cfg: TierJwtConfig,
    private readonly algorithms: string[],
    /** True: the visitor JWT (X-Widget-Token, else the bearer); false: the bearer alone. */
    readonly visitor: boolean,
  ) {}

  /** `visitorJwt` is identity.jwt, used when the tier's own keys are not set. */
  static async create(
    cfg: TierJwtConfig,
    visitorJwt: VisitorJwtSettings | undefined,
  ): Promise<TierJwtVerifier> {
    const own = cfg.jwksUrl || cfg.jwksFile || cfg.publicKeys.length > 0 || cfg.secret;
    if (!own) {
      if (!visitorJwt)
        throw new Error('tiers.jwt: set jwksUrl, jwksFile, publicKeys or secret (or identity.jwt)');
      const algs = cfg.algorithms ?? [...visitorJwt.algorithms];
      return new TierJwtVerifier(await verifyKey(visitorJwt), cfg, algs, true);
    }
    const key = cfg.jwksUrl
      ? createRemoteJWKSet(new URL(cfg.jwksUrl))
      : await verifyKey({ ...cfg, secretFile: '' } as unknown as VisitorJwtSettings);
    const algs =
      cfg.algorithms ??
      (cfg.secret && !cfg.jwksFile && cfg.publicKeys.length === 0 ? ['HS256'] : ['RS256', 'ES256']);
    return new TierJwtVerifier(key, cfg, algs, false);
  }

  /** The token this verifier reads from a request's headers. */
  token(headers: IncomingHttpHeaders): string | undefined {
    const authorization = header(headers, 'authorization');
    return this.visitor
      ? visitorToken(authorization, header(headers, 'x-widget-token'))
      : bearerToken(authorization);
  }

  /** The claims of the request's token; undefined when there is none or it fails verification. */
  async claims(headers: IncomingHttpHeaders): Promise<TierClaims | undefined> {
    const token = this.token(headers);
    // Not a JWT (a workspace token "<id>|<secret>", say): nothing to verify.
    if (!token || token.split('.').length !== 3) return undefined;
    const now = Date.now();
    const cached = this.#cache.get(token);
    if (cached && cached.expMs > now) return cached;
    try {
      const { payload } = await jwtVerify(token, this.key as Uint8Array, {
        algorithms: this.algorithms,
        issuer: this.cfg.issuer,
        audience: this.cfg.audience,
      });
      const expMs = payload.exp !== undefined ? payload.exp * 1000 : now + NO_EXP_TTL_MS;
      const claims = { tier: claimText(payload[this.cfg.claim]), sub: claimText(payload.sub), expMs };
      this.#cache.set(token, claims);
      return claims;
    } catch {
      return undefined;
    }
  }
}
