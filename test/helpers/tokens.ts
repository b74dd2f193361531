import { SignJWT } from 'jose';

export const TEST_JWT_SECRET = 'test-secret-test-secret-test-secret!';

/** A visitor-session JWT as the widget service would issue it (iss/aud of the default config). */
export async function visitorJwt(
  session: string,
  /** expiresIn 'none': no exp claim at all. */
  options: { secret?: string; expiresIn?: string | number; issuer?: string; audience?: string } = {},
): Promise<string> {
  const jwt = new SignJWT({ sid: session })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setIssuer(options.issuer ?? 'tollgate')
    .setAudience(options.audience ?? 'tollgate-widget');
  if (options.expiresIn !== 'none') jwt.setExpirationTime(options.expiresIn ?? '1h');
  return jwt.sign(new TextEncoder().encode(options.secret ?? TEST_JWT_SECRET));
}

/** An unsigned token ("alg": "none"), which must never be accepted. */
export function unsignedJwt(session: string): string {
  const enc = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const exp = Math.floor(Date.now() / 1000) + 3600;
  return `${enc({ alg: 'none', typ: 'JWT' })}.${enc({ sid: session, iss: 'tollgate', aud: 'tollgate-widget', exp })}.`;
}
