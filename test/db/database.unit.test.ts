import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, test } from 'vitest';
import { openDatabase, DATABASE_FILE, type Db } from '../../src/db/database.js';
import { MIGRATIONS } from '../../src/db/migrations/index.js';
import type { WorkspaceTokenStore } from '../../src/credentials/workspace-token.js';
import { CachedTokenStore } from '../../src/identity/token-verification.js';
import { createUser, userForKey } from '../../src/services/accounts/accounts.js';
import { openServiceDatabase } from '../../src/services/registry.js';
import { FIRST_START_FILE } from '../../src/services/accounts/first-start.js';
import {
  createWorkspaceToken,
  ensureWorkspaceToken,
  revokeWorkspaceToken,
  workspaceForToken,
} from '../../src/services/accounts/workspaces.js';
import { servicesConfigFrom } from '../../src/cli/services-config.js';
import { loadConfigText } from '../../src/rules/load.js';
import { DEFAULT_CONFIG } from '../helpers/default-config.js';
import { newDataDir } from '../helpers/embedded.js';
import { capturingLogger } from '../helpers/log-capture.js';

const open: Db[] = [];
afterEach(() => {
  while (open.length) open.pop()!.close();
});
const track = (db: Db) => (open.push(db), db);

const configFor = (dataDir: string, env: Record<string, string> = {}) =>
  servicesConfigFrom(
    loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', { PORT: '0', ADMIN_PORT: '0', DATA_DIR: dataDir, ...env })
      .config,
  );

describe('the services database', () => {
  test('is created in WAL mode with every migration applied, and reopening applies none twice', () => {
    const dir = newDataDir();
    track(openDatabase(dir)).close();
    open.pop();
    const db = track(openDatabase(dir));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.at(-1)!.version);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    const raw = track(new Database(join(dir, DATABASE_FILE), { readonly: true }));
    const tables = (
      raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]
    ).map((t) => t.name);
    expect(tables).toEqual(
      expect.arrayContaining([
        'users',
        'api_keys',
        'websites',
        'reports',
        'workspaces',
        'workspace_tokens',
        'coupons',
      ]),
    );
  });

  test('migration versions are strictly increasing', () => {
    const versions = MIGRATIONS.map((m) => m.version);
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect(new Set(versions).size).toBe(versions.length);
  });
});

describe('accounts', () => {
  test('a first start with no users and no bootstrap keys creates one user, its key in a 0600 file, logged by path only', () => {
    const dir = newDataDir();
    const first = capturingLogger();
    track(openServiceDatabase(configFor(dir), first.logger));
    const keyFile = join(dir, FIRST_START_FILE);
    const created = first.lines.filter((l) => 'keyFile' in l);
    expect(created).toEqual([
      expect.objectContaining({
        user: 1,
        keyFile,
        msg: `first start: created user "admin"; its API key is in ${keyFile} (readable by this account only): keep it and delete the file`,
      }),
    ]);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyFile, 'utf8').trimEnd();
    expect(key).toMatch(/^tg_[A-Za-z0-9_-]{32}$/);
    expect(JSON.stringify(first.lines)).not.toContain(key);

    const second = capturingLogger();
    const db = track(openServiceDatabase(configFor(dir), second.logger));
    expect(second.lines.filter((l) => 'keyFile' in l)).toEqual([]);
    expect(userForKey(db, key)).toBe(1);
  });

  test('bootstrap keys each get a user, once, and no admin is invented', () => {
    const dir = newDataDir();
    const { logger, lines } = capturingLogger();
    const env = { BOOTSTRAP_API_KEYS: 'key-one, key-two' };
    track(openServiceDatabase(configFor(dir, env), logger)).close();
    open.pop();
    const db = track(openServiceDatabase(configFor(dir, env), logger));
    expect(lines.filter((l) => 'keyFile' in l)).toEqual([]);
    expect(db.prepare('SELECT id, name FROM users ORDER BY id').all()).toEqual([
      { id: 1, name: 'bootstrap-1' },
      { id: 2, name: 'bootstrap-2' },
    ]);
    expect(userForKey(db, 'key-one')).toBe(1);
    expect(userForKey(db, 'key-two')).toBe(2);
    expect(userForKey(db, 'key-three')).toBeUndefined();
  });

  test('keys are stored as SHA-256 only', () => {
    const db = track(openDatabase(newDataDir()));
    const { key } = createUser(db, 'carol');
    const rows = db.prepare('SELECT key_hash FROM api_keys').all() as { key_hash: Buffer }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]!.key_hash.length).toBe(32);
    expect(rows[0]!.key_hash.includes(Buffer.from(key))).toBe(false);
  });
});

describe('workspace tokens', () => {
  test('create, verify, revoke; a wrong secret or a revoked token gives no workspace', () => {
    const db = track(openDatabase(newDataDir()));
    const { id, token } = createWorkspaceToken(db, 'acme');
    const secret = token.slice(id.length + 1);
    expect(token).toBe(`${id}|${secret}`);
    expect(workspaceForToken(db, id, secret)).toEqual({ id: 1, name: 'acme' });
    expect(workspaceForToken(db, id, `${secret}x`)).toBeUndefined();
    expect(revokeWorkspaceToken(db, id)).toBe(true);
    expect(revokeWorkspaceToken(db, id)).toBe(false);
    expect(workspaceForToken(db, id, secret)).toBeUndefined();
  });

  test('a bootstrap token is ensured (and revived, and its secret replaced)', () => {
    const db = track(openDatabase(newDataDir()));
    ensureWorkspaceToken(db, 'boot|first-secret', 'shop');
    revokeWorkspaceToken(db, 'boot');
    ensureWorkspaceToken(db, 'boot|second-secret', 'shop');
    expect(workspaceForToken(db, 'boot', 'first-secret')).toBeUndefined();
    expect(workspaceForToken(db, 'boot', 'second-secret')).toEqual({ id: 1, name: 'shop' });
    expect(() => ensureWorkspaceToken(db, 'no-bar', 'shop')).toThrow(
      'a workspace token has the form "<id>|<secret>"',
    );
  });

  test('the cache remembers successes for its ttl and never remembers a failure', async () => {
    const answers = new Map([['7|good', true]]);
    let asked = 0;
    const inner: WorkspaceTokenStore = {
      async verify(id, secret) {
        asked++;
        return answers.get(`${id}|${secret}`) ?? false;
      },
    };
    let now = 1_000;
    const cached = new CachedTokenStore(inner, 60, { now: () => now });
    expect(await cached.verify('7', 'good')).toBe(true);
    answers.set('7|good', false); // revoked
    now += 59;
    expect(await cached.verify('7', 'good')).toBe(true); // still within the ttl
    expect(await cached.verify('7', 'bad')).toBe(false);
    expect(await cached.verify('7', 'bad')).toBe(false);
    expect(asked).toBe(3);
    now += 2; // past the ttl
    expect(await cached.verify('7', 'good')).toBe(false);
    expect(asked).toBe(4);
  });
});
