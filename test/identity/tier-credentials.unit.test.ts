// The tier JWT: the visitor JWT read with identity.jwt's keys, or a bearer JWT verified with the
// tier's own (secret, JWKS file); a token that fails, or is no JWT at all, names no tier.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { expect, test } from 'vitest';
import type { TierJwtConfig } from '../../src/config/schema.js';
import type { VisitorJwtSettings } from '../../src/credentials/visitor-jwt.js';
import { TierJwtVerifier } from '../../src/identity/tier-credentials.js';

const SECRET = 'tier-secret-tier-secret-tier-secret!';
const cfg = (over: Partial<TierJwtConfig> = {}): TierJwtConfig => ({
  claim: 'plan',
  jwksUrl: '',
  jwksFile: '',
  publicKeys: [],
  secret: '',
  ...over,
});
const hs = (claims: object, secret = SECRET, exp: string | number = '1h') =>
  new SignJWT({ sub: 'u1', ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime(exp)
    .sign(new TextEncoder().encode(secret));

test('a bearer JWT verified with the tier secret; bad, expired or non-JWT tokens name no tier', async () => {
  const v = await TierJwtVerifier.create(cfg({ secret: SECRET, issuer: 'idp' }), undefined);
  const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
  expect(await v.claims(bearer(await hs({ plan: 'pro', iss: 'idp' })))).toMatchObject({
    tier: 'pro',
    sub: 'u1',
  });
  expect(await v.claims(bearer(await hs({ plan: 7, iss: 'idp' })))).toMatchObject({ tier: '7' });
  expect(await v.claims(bearer(await hs({ iss: 'idp' })))).toMatchObject({ tier: undefined, sub: 'u1' });
  expect(await v.claims(bearer(await hs({ plan: 'pro', iss: 'other' })))).toBeUndefined();
  expect(await v.claims(bearer(await hs({ plan: 'pro', iss: 'idp' }, 'x'.repeat(40))))).toBeUndefined();
  expect(await v.claims(bearer(await hs({ plan: 'pro', iss: 'idp' }, SECRET, 1)))).toBeUndefined();
  expect(await v.claims(bearer('t1|s3cret'))).toBeUndefined();
  expect(await v.claims({})).toBeUndefined();
  // The bearer alone: a visitor token in X-Widget-Token is not this verifier's.
  expect(await v.claims({ 'x-widget-token': await hs({ plan: 'pro', iss: 'idp' }) })).toBeUndefined();
});

test("the visitor JWT, with identity.jwt's keys and algorithms", async () => {
  const visitor = { secret: SECRET, secretFile: '', publicKeys: [], jwksFile: '', algorithms: ['HS256'] };
  const v = await TierJwtVerifier.create(cfg(), visitor as unknown as VisitorJwtSettings);
  expect(v.visitor).toBe(true);
  expect(await v.claims({ 'x-widget-token': await hs({ plan: 'free' }) })).toMatchObject({ tier: 'free' });
  expect(await v.claims({ authorization: `Bearer ${await hs({ plan: 'pro' })}` })).toMatchObject({
    tier: 'pro',
  });
  await expect(TierJwtVerifier.create(cfg(), undefined)).rejects.toThrow('tiers.jwt: set jwksUrl');
});

test('a JWKS file (ES256), the default algorithms of own keys', async () => {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const file = join(mkdtempSync(join(tmpdir(), 'tier-jwks-')), 'jwks.json');
  writeFileSync(
    file,
    JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] }),
  );
  const v = await TierJwtVerifier.create(cfg({ jwksFile: file, claim: 'tier' }), undefined);
  const token = await new SignJWT({ tier: 'enterprise' })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setExpirationTime('1h')
    .sign(privateKey);
  expect(await v.claims({ authorization: `Bearer ${token}` })).toMatchObject({
    tier: 'enterprise',
    sub: undefined,
  });
  // An HMAC token signed with anything is refused: HS256 is not among ES256/RS256.
  expect(await v.claims({ authorization: `Bearer ${await hs({ tier: 'x' })}` })).toBeUndefined();
});
