// A workspace's plan (migration 14): set and cleared, read with a live token's facts (its workspace
// and plan) for the gateway's tiers, never for a revoked token, and cached like verifications.
import { expect, test } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { CachedTokenStore, StaticTokenStore } from '../../src/identity/token-verification.js';
import { createUser } from '../../src/services/accounts/accounts.js';
import {
  createWorkspaceToken,
  DatabaseTokenStore,
  revokeWorkspaceToken,
  setWorkspacePlan,
} from '../../src/services/accounts/workspaces.js';
import { newDataDir } from '../helpers/embedded.js';

test("a token's facts: its workspace and the workspace's plan", async () => {
  const db = openDatabase(newDataDir());
  try {
    createUser(db, 'owner');
    const { id } = createWorkspaceToken(db, 'acme');
    const store = new DatabaseTokenStore(db, false);
    expect(await store.facts(id)).toEqual({ workspace: 'acme', plan: undefined });
    expect(setWorkspacePlan(db, 'acme', 'pro')).toBe(true);
    expect(setWorkspacePlan(db, 'nope', 'pro')).toBe(false);
    expect(await store.facts(id)).toEqual({ workspace: 'acme', plan: 'pro' });

    const cached = new CachedTokenStore(store, 60_000);
    expect(await cached.facts(id)).toEqual({ workspace: 'acme', plan: 'pro' });
    setWorkspacePlan(db, 'acme', undefined);
    expect(await cached.facts(id)).toEqual({ workspace: 'acme', plan: 'pro' }); // within the ttl
    expect(await store.facts(id)).toEqual({ workspace: 'acme', plan: undefined });

    revokeWorkspaceToken(db, id);
    expect(await store.facts(id)).toBeUndefined();
    expect(await store.facts('unknown')).toBeUndefined();
  } finally {
    db.close();
  }
});

test("a static token's facts come from the config", async () => {
  const store = new StaticTokenStore([
    { id: 'a', sha256: '0'.repeat(64), plan: 'pro', workspace: 'acme' },
    { id: 'b', sha256: '0'.repeat(64) },
  ]);
  expect(await store.facts('a')).toEqual({ plan: 'pro', workspace: 'acme' });
  expect(await store.facts('b')).toEqual({ plan: undefined, workspace: undefined });
  expect(await store.facts('c')).toBeUndefined();
});
