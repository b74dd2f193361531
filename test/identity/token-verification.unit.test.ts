import { describe, expect, test } from 'vitest';
import { bearerToken } from '../../src/credentials/bearer.js';
import { sha256Hex } from '../../src/credentials/digest.js';
import { parseWorkspaceToken, type WorkspaceTokenStore } from '../../src/credentials/workspace-token.js';
import { StaticTokenStore, verifyWorkspaceToken } from '../../src/identity/token-verification.js';

const store = new StaticTokenStore([{ id: '7', sha256: sha256Hex('s3cret') }]);

describe('workspace tokens', () => {
  test('"<id>|<secret>" from a Bearer header, verified against the store', async () => {
    expect(await verifyWorkspaceToken('Bearer 7|s3cret', store)).toEqual({ ok: true, id: '7' });
    expect(await verifyWorkspaceToken('bearer   7|s3cret ', store)).toEqual({ ok: true, id: '7' });
    expect(await verifyWorkspaceToken(undefined, store)).toEqual({ ok: false, reason: 'missing' });
    expect(await verifyWorkspaceToken('Basic abc', store)).toEqual({ ok: false, reason: 'missing' });
    for (const bad of ['Bearer 7|wrong', 'Bearer 7', 'Bearer |s3cret', 'Bearer 7|', 'Bearer 8|s3cret']) {
      expect(await verifyWorkspaceToken(bad, store), bad).toEqual({ ok: false, reason: 'invalid' });
    }
  });

  test('a store that fails never lets a token through', async () => {
    const broken: WorkspaceTokenStore = { verify: () => Promise.reject(new Error('database is locked')) };
    expect(await verifyWorkspaceToken('Bearer 7|s3cret', broken)).toEqual({ ok: false, reason: 'invalid' });
  });

  test('parsing', () => {
    expect(bearerToken('Bearer a.b.c')).toBe('a.b.c');
    expect(bearerToken('Bearer')).toBeUndefined();
    expect(parseWorkspaceToken('12|abc|def')).toEqual({ id: '12', secret: 'abc|def' });
  });
});
