import {
  VisitorJwtSigner,
  VisitorJwtVerifier,
  type JwtOutcome,
  type VisitorJwtSettings,
} from '../../credentials/visitor-jwt.js';

/**
 * Visitor-session tokens, issued and verified with the one config entry the gateway verifies them
 * with (identity.jwt), so the two sides cannot drift.
 */
export interface VisitorTokens {
  issue(sessionId: string): Promise<{ token: string; expiresAt: Date }>;
  verify(token: string | undefined): Promise<JwtOutcome>;
}

const HMAC = /^HS(?:256|384|512)$/;

/** Throws a startup error that says what to change when the settings cannot issue tokens their verifier accepts. */
export function issuingConfig(
  settings: VisitorJwtSettings | undefined,
): VisitorJwtSettings & { algorithm: string } {
  if (!settings) throw new Error('the widget service issues visitor tokens: configure identity.jwt');
  const algorithm = settings.algorithms[0]!;
  if (!HMAC.test(algorithm)) {
    throw new Error(
      `the widget service signs visitor tokens with identity.jwt.algorithms[0], which must be ` +
        `HS256, HS384 or HS512 (got "${algorithm}")`,
    );
  }
  if (settings.publicKeys.length > 0 || settings.jwksFile) {
    throw new Error(
      'the widget service signs visitor tokens with a shared secret, but identity.jwt verifies with ' +
        'publicKeys/jwksFile: remove them and set identity.jwt.secret or secretFile',
    );
  }
  return { ...settings, algorithm };
}

export async function createVisitorTokens(settings: VisitorJwtSettings | undefined): Promise<VisitorTokens> {
  const cfg = issuingConfig(settings);
  // The signer loads exactly the key the gateway's verifier loads: the secret, else the secret file.
  const signer = await VisitorJwtSigner.create(cfg, cfg.algorithm);
  const verifier = await VisitorJwtVerifier.create(cfg);
  return {
    issue: (sessionId) => signer.sign(sessionId),
    verify: (token) => verifier.verify(token),
  };
}
