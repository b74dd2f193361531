// Workspaces get owners: migration 7 on a database file written before it, the bootstrap workspace
// token at start, and a workspace asked for on behalf of a user who does not own it.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, test } from 'vitest';
import { servicesConfigFrom } from '../../../src/cli/services-config.js';
import { loadConfigText } from '../../../src/rules/load.js';
import { DATABASE_FILE, migrate, openDatabase, type Db } from '../../../src/db/database.js';
import { MIGRATIONS } from '../../../src/db/migrations/index.js';
import type { Gateway } from '../../../src/runtime/gateway.js';
import { userForKey } from '../../../src/services/accounts/accounts.js';
import { openServiceDatabase } from '../../../src/services/registry.js';
import {
  createWorkspaceToken,
  ensureWorkspace,
  ensureWorkspaceToken,
  WorkspaceOwnerError,
} from '../../../src/services/accounts/workspaces.js';
import { DEFAULT_CONFIG } from '../../helpers/default-config.js';
import { ALICE_KEY, BOB_KEY, embeddedEnv, newDataDir, startEmbeddedGateway } from '../../helpers/embedded.js';
import { send } from '../../helpers/gateway.js';
import { capturingLogger } from '../../helpers/log-capture.js';

const BEFORE_OWNERS = 6;
const NOT_YOURS =
  '{"error":{"code":"validation_failed","message":"The given data was invalid.",' +
  '"fields":{"website_id":["The selected website_id is invalid."]}}}';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});
const track = <T extends Db | Gateway>(thing: T): T => {
  cleanup.push(async () => void (await thing.close()));
  return thing;
};

/** A data directory whose database file stops at migration 6 (workspaces without owners), filled by `fill`. */
function fileBeforeOwners(fill: (db: Db) => void): string {
  const dir = newDataDir();
  const db = new Database(join(dir, DATABASE_FILE));
  db.pragma('foreign_keys = ON');
  migrate(
    db,
    MIGRATIONS.filter((m) => m.version <= BEFORE_OWNERS),
  );
  expect(db.pragma('user_version', { simple: true })).toBe(BEFORE_OWNERS);
  fill(db);
  db.close();
  return dir;
}

const at = '2024-01-01T00:00:00.000Z';
const addUser = (db: Db, id: number) =>
  db.prepare('INSERT INTO users (id, name, created_at) VALUES (?, ?, ?)').run(id, `user-${id}`, at);
const addWorkspace = (db: Db, name: string) =>
  db.prepare('INSERT INTO workspaces (name, created_at) VALUES (?, ?)').run(name, at);
const addWebsite = (db: Db, id: number, userId: number) =>
  db
    .prepare('INSERT INTO websites (id, user_id, url, created_at, updated_at) VALUES (?, ?, ?, ?, ?)')
    .run(id, userId, `site-${id}.example`, at, at);

const owners = (dir: string): Record<string, number | null> => {
  const reader = new Database(join(dir, DATABASE_FILE), { readonly: true });
  try {
    const rows = reader.prepare('SELECT name, user_id FROM workspaces ORDER BY name').all() as {
      name: string;
      user_id: number | null;
    }[];
    return Object.fromEntries(rows.map((r) => [r.name, r.user_id]));
  } finally {
    reader.close();
  }
};

const configFor = (dir: string, extra: Record<string, string> = {}) =>
  servicesConfigFrom(loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', embeddedEnv(dir, extra)).config);

describe('migration 7 on an existing file', () => {
  test('existing workspaces go to the lowest user id; the widget then honours that owner', async () => {
    const dir = fileBeforeOwners((db) => {
      addUser(db, 7);
      addUser(db, 3);
      addWorkspace(db, 'old-a');
      addWorkspace(db, 'old-b');
      addWebsite(db, 40, 3);
      addWebsite(db, 41, 7);
    });
    track(openDatabase(dir));
    expect(owners(dir)).toEqual({ 'old-a': 3, 'old-b': 3 });

    const gateway = track(await startEmbeddedGateway(dir));
    const init = (website_id: number) =>
      send(`${gateway.url()}/api/v1/widget/init`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workspace: 'old-a', website_id }),
      });
    const own = await init(40);
    expect(own.status, own.text).toBe(200);
    expect(own.json()).toMatchObject({ workspace: { name: 'old-a' }, website_id: 40 });
    const others = await init(41);
    expect({ status: others.status, body: others.text }).toEqual({ status: 422, body: NOT_YOURS });
    // The bootstrap users came after: they own nothing of the old workspaces.
    expect(owners(dir)).toEqual({ 'old-a': 3, 'old-b': 3 });
  });

  test('with no users, the workspaces stay without an owner until a service bootstraps the first', () => {
    const dir = fileBeforeOwners((db) => addWorkspace(db, 'lonely'));
    track(openDatabase(dir));
    expect(owners(dir)).toEqual({ lonely: null });

    const { logger, lines } = capturingLogger();
    const db = track(openServiceDatabase(configFor(dir), logger));
    const alice = userForKey(db, ALICE_KEY);
    expect(alice).toBe(1);
    expect(owners(dir)).toEqual({ lonely: alice });
    expect(lines.filter((l) => l['workspaces'] !== undefined)).toMatchObject([
      { level: 30, workspaces: 1, msg: 'workspaces without an owner now belong to the first user' },
    ]);
  });
});

describe('the bootstrap workspace token', () => {
  test('on a first start without bootstrap keys, the generated admin (user 1) owns it, and the demo workspace', () => {
    const dir = newDataDir();
    const config = configFor(dir, {
      BOOTSTRAP_API_KEYS: '',
      BOOTSTRAP_WORKSPACE_TOKEN: 'boot01|bootstrap-secret',
      BOOTSTRAP_WORKSPACE: 'shop',
    });
    track(openServiceDatabase(config, capturingLogger().logger));
    expect(owners(dir)).toEqual({ demo: 1, shop: 1 });
  });

  test('with bootstrap keys, the first of them owns it', () => {
    const dir = newDataDir();
    const config = configFor(dir, { BOOTSTRAP_WORKSPACE_TOKEN: 'boot02|bootstrap-secret' });
    const db = track(openServiceDatabase(config, capturingLogger().logger));
    expect(owners(dir)).toEqual({ default: userForKey(db, ALICE_KEY) });
  });

  test('a workspace another user already owns keeps its owner across restarts', () => {
    const dir = newDataDir();
    const config = configFor(dir, { BOOTSTRAP_WORKSPACE_TOKEN: 'boot03|bootstrap-secret' });
    const first = openServiceDatabase(configFor(dir), capturingLogger().logger);
    const bob = userForKey(first, BOB_KEY)!;
    createWorkspaceToken(first, 'default', bob);
    first.close();
    const db = track(openServiceDatabase(config, capturingLogger().logger));
    expect(owners(dir)).toEqual({ default: bob });
    // The bootstrap token works, for Bob's workspace.
    expect(db.prepare('SELECT workspace_id FROM workspace_tokens WHERE id = ?').get('boot03')).toEqual({
      workspace_id: db.prepare("SELECT id FROM workspaces WHERE name = 'default'").pluck().get(),
    });
  });
});

describe('a workspace asked for on behalf of a user', () => {
  test('another user cannot take it over: an error, and nothing changes', () => {
    const dir = newDataDir();
    const db = track(openServiceDatabase(configFor(dir), capturingLogger().logger));
    const alice = userForKey(db, ALICE_KEY)!;
    const bob = userForKey(db, BOB_KEY)!;
    createWorkspaceToken(db, 'alices', alice);
    const tokens = () => db.prepare('SELECT count(*) FROM workspace_tokens').pluck().get();
    expect(tokens()).toBe(1);

    expect(() => createWorkspaceToken(db, 'alices', bob)).toThrow(
      new WorkspaceOwnerError('alices', alice, bob),
    );
    expect(() => ensureWorkspace(db, 'alices', bob)).toThrow(
      `workspace "alices" belongs to user ${alice}, not to user ${bob}`,
    );
    expect(tokens()).toBe(1);
    expect(owners(dir)).toEqual({ alices: alice });

    // Its owner, or nobody named: fine, and it stays Alice's.
    createWorkspaceToken(db, 'alices', alice);
    ensureWorkspaceToken(db, 'again1|another-secret', 'alices');
    expect(tokens()).toBe(3);
    expect(owners(dir)).toEqual({ alices: alice });
  });

  test('an unknown user id is refused by the database (a foreign key)', () => {
    const dir = newDataDir();
    const db = track(openServiceDatabase(configFor(dir), capturingLogger().logger));
    expect(() => ensureWorkspace(db, 'nobodys', 99)).toThrow(
      expect.objectContaining({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' }),
    );
    expect(owners(dir)).toEqual({});
  });
});
