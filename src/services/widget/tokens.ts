import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { GatewayConfig, JwtConfig } from '../../config/schema.js';
import { readOrCreateSecret, VisitorJwtVerifier, type JwtOutcome } from '../../identity/visitor-jwt.js';

/**
 * Visitor-session tokens, issued and verified with the one config entry the gateway verifies them
 * with (identity.jwt), so the two sides cannot drift.
 */
export interface VisitorTokens {
  issue(sessionId: string): Promise<{ token: string; expiresAt: Date }>;
  verify(token: string | undefined): Promise<JwtOutcome>;
}

const HMAC = /^HS(?:256|384|512)$/;

/** Throws a startup error that says what to change when the config cannot issue tokens its verifier accepts. */
export function issuingConfig(config: GatewayConfig): JwtConfig & { algorithm: string } {
  const cfg = config.identity.jwt;
  if (!cfg) throw new Error('the widget service issues visitor tokens: configure identity.jwt');
  const algorithm = cfg.algorithms[0]!;
  if (!HMAC.test(algorithm)) {
    throw new Error(
      `the widget service signs visitor tokens with identity.jwt.algorithms[0], which must be ` +
        `HS256, HS384 or HS512 (got "${algorithm}")`,
    );
  }
  if (cfg.publicKeys.length > 0 || cfg.jwksFile) {
    throw new Error(
      'the widget service signs visitor tokens with a shared secret, but identity.jwt verifies with ' +
        'publicKeys/jwksFile: remove them and set identity.jwt.secret or secretFile',
    );
  }
  return { ...cfg, algorithm };
}

export async function createVisitorTokens(config: GatewayConfig): Promise<VisitorTokens> {
  const cfg = issuingConfig(config);
  // Exactly the key the gateway's verifier loads: the secret, else the (created once) secret file.
  const key = new TextEncoder().encode(cfg.secret || (await readOrCreateSecret(cfg.secretFile)));
  const verifier = await VisitorJwtVerifier.create(cfg);
  return {
    async issue(sessionId) {
      const exp = Math.floor((Date.now() + cfg.ttl) / 1000);
      const jwt = new SignJWT({ [cfg.sessionClaim]: sessionId })
        .setProtectedHeader({ alg: cfg.algorithm, typ: 'JWT' })
        .setIssuedAt()
        .setJti(randomUUID()) // every init gets a distinct token, even within one second
        .setExpirationTime(exp);
      if (cfg.issuer !== undefined) jwt.setIssuer(cfg.issuer);
      if (cfg.audience !== undefined) jwt.setAudience(cfg.audience);
      return { token: await jwt.sign(key), expiresAt: new Date(exp * 1000) };
    },
    verify: (token) => verifier.verify(token),
  };
}
