import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { describe, expect, test, vi } from 'vitest';
import {
  visitorToken,
  VisitorJwtSigner,
  VisitorJwtVerifier,
  type VisitorJwtSettings,
} from '../../src/credentials/visitor-jwt.js';
import { formatWorkspaceToken, parseWorkspaceToken } from '../../src/credentials/workspace-token.js';
import { newDataDir } from '../helpers/embedded.js';

const settings = (over: Partial<VisitorJwtSettings> = {}): VisitorJwtSettings => ({
  secret: '',
  secretFile: join(newDataDir(), 'widget-jwt.secret'),
  publicKeys: [],
  jwksFile: '',
  algorithms: ['HS256'],
  issuer: 'tollgate',
  audience: 'tollgate-widget',
  sessionClaim: 'sid',
  clockTolerance: 0,
  ttl: 60_000,
  ...over,
});

describe('visitor JWTs', () => {
  test('the signer creates the secret file; a verifier of the same settings accepts what it signs', async () => {
    const s = settings();
    const signer = await VisitorJwtSigner.create(s, 'HS256');
    const secret = readFileSync(s.secretFile, 'utf8').trim();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const before = Date.now();
    const { token, expiresAt } = await signer.sign('session-1');
    expect(Math.abs(expiresAt.getTime() - (before + 60_000))).toBeLessThan(2_000);
    const verifier = await VisitorJwtVerifier.create(s);
    expect(await verifier.verify(token)).toEqual({ ok: true, session: 'session-1' });
    const [header, payload] = token
      .split('.')
      .slice(0, 2)
      .map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()));
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(payload).toMatchObject({ sid: 'session-1', iss: 'tollgate', aud: 'tollgate-widget' });
  });

  test('a token lives exactly its ttl, also when it is signed as a second turns', async () => {
    const signer = await VisitorJwtSigner.create(settings(), 'HS256');
    // The clock reads 1.999 s, then 2.000 s: iat and exp come from one read of it.
    const now = vi.spyOn(Date, 'now').mockReturnValueOnce(1_999).mockReturnValue(2_000);
    try {
      const { token } = await signer.sign('session-edge');
      const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as {
        iat: number;
        exp: number;
      };
      expect([claims.iat, claims.exp]).toEqual([1, 61]);
    } finally {
      now.mockRestore();
    }
  });

  test('a token of another secret, issuer or audience is invalid; a missing one is missing', async () => {
    const s = settings({ secret: 'the-shared-secret-of-this-gateway!' });
    const verifier = await VisitorJwtVerifier.create(s);
    const other = await VisitorJwtSigner.create(
      { ...s, secret: 'someone-elses-secret-entirely!!!' },
      'HS256',
    );
    expect(await verifier.verify((await other.sign('x')).token)).toEqual({ ok: false, reason: 'invalid' });
    for (const over of [{ issuer: 'evil' }, { audience: 'elsewhere' }]) {
      const signer = await VisitorJwtSigner.create({ ...s, ...over }, 'HS256');
      expect(await verifier.verify((await signer.sign('x')).token), JSON.stringify(over)).toEqual({
        ok: false,
        reason: 'invalid',
      });
    }
    expect(await verifier.verify(undefined)).toEqual({ ok: false, reason: 'missing' });
  });

  test('an expired token is expired, and one without exp is invalid', async () => {
    const s = settings({ secret: 'the-shared-secret-of-this-gateway!' });
    const verifier = await VisitorJwtVerifier.create(s);
    const key = new TextEncoder().encode(s.secret);
    const base = () =>
      new SignJWT({ sid: 'x' })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer('tollgate')
        .setAudience('tollgate-widget');
    const expired = await base()
      .setExpirationTime(Math.floor(Date.now() / 1000) - 10)
      .sign(key);
    expect(await verifier.verify(expired)).toEqual({ ok: false, reason: 'expired' });
    expect(await verifier.verify(await base().sign(key))).toEqual({ ok: false, reason: 'invalid' });
  });

  test('X-Widget-Token wins over a Bearer header', () => {
    expect(visitorToken('Bearer a.b.c', ' d.e.f ')).toBe('d.e.f');
    expect(visitorToken('Bearer a.b.c', undefined)).toBe('a.b.c');
    expect(visitorToken('Basic abc', '')).toBeUndefined();
  });
});

test('a workspace token is "<id>|<secret>", and reads back as it was made', () => {
  expect(formatWorkspaceToken('7a', 's|e|cret')).toBe('7a|s|e|cret');
  expect(parseWorkspaceToken(formatWorkspaceToken('7a', 's|e|cret'))).toEqual({
    id: '7a',
    secret: 's|e|cret',
  });
});
