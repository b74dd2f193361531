// `tollgate users` and `tollgate tokens` as an operator runs them: real processes, exit codes, and
// the SQLite file they write (which must hold only hashes).
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect } from 'vitest';
import { DATABASE_FILE } from '../../src/db/database.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { ALICE_KEY, BOB_KEY } from '../helpers/embedded.js';
import { embeddedTest } from '../helpers/fixtures.js';
import { send } from '../helpers/gateway.js';

const TOKENS_USAGE =
  'usage: tollgate tokens create --workspace NAME [--user ID] | tollgate tokens list [--json] | tollgate tokens revoke ID' +
  ' | tollgate tokens plan --workspace NAME [PLAN]';
const USERS_USAGE =
  'usage: tollgate users create --name NAME [--email ADDRESS] | tollgate users list [--json] | tollgate users rotate-key ID';

const test = embeddedTest()
  /** Every key and secret the CLI printed in this file, and the bootstrap keys of the gateway. */
  .extend('printed', { scope: 'file' }, (): string[] => [ALICE_KEY, BOB_KEY])
  /** `tollgate` on the gateway's data directory. */
  .extend(
    'cli',
    { scope: 'file' },
    ({ dataDir }) =>
      (...args: string[]): Promise<CliResult> =>
        runCli(args, { env: { DATA_DIR: dataDir, LOG_LEVEL: 'silent' } }),
  );

describe('tollgate users create', () => {
  test(
    'prints a new API key once; it authenticates the websites API through the gateway',
    { timeout: 60_000 },
    async ({ cli, gateway, printed }) => {
      const run = await cli('users', 'create', '--name', 'carol');
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
      const m = /^created user (\d+) "carol"; its API key \(shown once\):\n(tg_[A-Za-z0-9_-]{32})\n$/.exec(
        run.stdout,
      );
      expect(m).not.toBeNull();
      const key = m![2]!;
      printed.push(key);

      const ok = await send(`${gateway.url()}/api/v1/websites`, {
        headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
      });
      expect(ok.status).toBe(200);
      const wrong = await send(`${gateway.url()}/api/v1/websites`, {
        headers: { authorization: `Bearer ${key}x`, accept: 'application/json' },
      });
      expect({ status: wrong.status, body: wrong.json() }).toEqual({
        status: 401,
        body: { message: 'Unauthenticated.' },
      });

      // A second user gets another key.
      const other = await cli('users', 'create', '--name', 'carol');
      expect(other.code).toBe(0);
      const otherKey = other.stdout.trim().split('\n')[1]!;
      printed.push(otherKey);
      expect(otherKey).not.toBe(key);
    },
  );

  test(
    '--email: the address the account API shows (and the reports go to); a bad one exits 2',
    { timeout: 60_000 },
    async ({ cli, gateway, printed }) => {
      const run = await cli('users', 'create', '--name', 'dave', '--email', 'dave@example.com');
      expect(run.code).toBe(0);
      const [, id, key] = /^created user (\d+) "dave"; its API key \(shown once\):\n(\S+)\n$/.exec(
        run.stdout,
      )!;
      printed.push(key!);
      const account = await send(`${gateway.url()}/api/v1/account`, {
        headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
      });
      expect(account.status).toBe(200);
      expect(account.json()).toEqual({
        data: { id: Number(id), name: 'dave', email: 'dave@example.com', created_at: expect.any(String) },
        status: 200,
      });
      const bad = await cli('users', 'create', '--name', 'eve', '--email', 'not an address');
      expect(bad.code).toBe(2);
      expect(bad.stdout).toBe('');
      expect(bad.stderr.startsWith('--email must be an e-mail address, got "not an address"\nusage:\n')).toBe(
        true,
      );
    },
  );

  test('usage errors exit 2', { timeout: 60_000 }, async ({ cli }) => {
    const runs = await Promise.all([cli('users', 'create'), cli('users', 'delete', '--name', 'x')]);
    for (const run of runs) {
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr.startsWith(`${USERS_USAGE}\nusage:\n`)).toBe(true);
    }
  });
});

describe('tollgate tokens', () => {
  test(
    'create prints "<id>|<secret>" once; revoke revokes it, once',
    { timeout: 60_000 },
    async ({ cli, gateway, printed }) => {
      const created = await cli('tokens', 'create', '--workspace', 'acme');
      expect(created.code).toBe(0);
      expect(created.stderr).toBe('');
      const m =
        /^created token ([0-9a-f]{12}) for workspace "acme" \(shown once\):\n([0-9a-f]{12})\|([A-Za-z0-9_-]{40})\n$/.exec(
          created.stdout,
        );
      expect(m).not.toBeNull();
      const [, id, sameId, secret] = m!;
      expect(sameId).toBe(id);
      printed.push(secret!, `${id}|${secret}`);

      const handshake = await send(`${gateway.url()}/v1/wp/handshake`, {
        method: 'POST',
        headers: { authorization: `Bearer ${id}|${secret}` },
      });
      expect(handshake.status).toBe(200);

      expect(await cli('tokens', 'revoke', id!)).toEqual({
        code: 0,
        stdout: `revoked token ${id}\n`,
        stderr: '',
      });
      expect(await cli('tokens', 'revoke', id!)).toEqual({
        code: 1,
        stdout: '',
        stderr: `no live token with id "${id}"\n`,
      });
    },
  );

  test('revoking an unknown id exits 1', async ({ cli }) => {
    expect(await cli('tokens', 'revoke', 'feedfacecafe')).toEqual({
      code: 1,
      stdout: '',
      stderr: 'no live token with id "feedfacecafe"\n',
    });
  });

  test('usage errors exit 2', { timeout: 60_000 }, async ({ cli }) => {
    const cases = [
      ['tokens', 'create'],
      ['tokens', 'revoke'],
      ['tokens', 'list', 'all'],
      ['tokens', 'create', '--workspace'],
      ['tokens', 'create', '--workspace', 'acme', '--bogus'],
    ];
    const runs = await Promise.all(cases.map((args) => cli(...args)));
    runs.forEach((run, i) => {
      expect({ args: cases[i], code: run.code, stdout: run.stdout }).toEqual({
        args: cases[i],
        code: 2,
        stdout: '',
      });
      expect(run.stderr).toContain('\nusage:\n');
    });
    expect(runs[0]!.stderr.startsWith(`${TOKENS_USAGE}\n`)).toBe(true);
  });
});

describe('the database', () => {
  test('holds only hashes: no row contains a printed key or secret', ({ dataDir, printed }) => {
    expect(printed.length).toBe(7);
    const db = new Database(join(dataDir, DATABASE_FILE), { readonly: true });
    try {
      const tables = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .pluck()
        .all() as string[];
      expect(tables).toEqual(expect.arrayContaining(['users', 'api_keys', 'workspaces', 'workspace_tokens']));
      let cells = 0;
      for (const table of tables) {
        for (const row of db.prepare(`SELECT * FROM "${table}"`).all() as Record<string, unknown>[]) {
          for (const value of Object.values(row)) {
            cells++;
            const text = Buffer.isBuffer(value) ? value.toString('latin1') : String(value);
            for (const secret of printed) expect(text).not.toContain(secret);
          }
        }
      }
      expect(cells).toBeGreaterThan(0);
      const hashes = db.prepare('SELECT length(key_hash) FROM api_keys').pluck().all();
      expect(new Set(hashes)).toEqual(new Set([32]));
      const secrets = db.prepare('SELECT length(secret_hash) FROM workspace_tokens').pluck().all();
      expect(new Set(secrets)).toEqual(new Set([32]));
    } finally {
      db.close();
    }
  });
});
