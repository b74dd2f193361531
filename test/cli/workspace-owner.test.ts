// `tollgate tokens create --workspace NAME [--user ID]` as an operator runs it (real processes, exit
// codes, the SQLite file), and the owner it records deciding which website_id widget init accepts.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect } from 'vitest';
import { DATABASE_FILE } from '../../src/db/database.js';
import { DEFAULT_CONFIG } from '../helpers/default-config.js';
import { embeddedEnv, newDataDir } from '../helpers/embedded.js';
import { test as base } from '../helpers/fixtures.js';
import { send } from '../helpers/gateway.js';
import { runCli, type CliResult } from '../helpers/cli.js';

const CREATED =
  /^created token ([0-9a-f]{12}) for workspace "([^"]+)" \(shown once\):\n(\1\|[A-Za-z0-9_-]{40})\n$/;
const NOT_YOURS =
  '{"error":{"code":"validation_failed","message":"The given data was invalid.",' +
  '"fields":{"website_id":["The selected website_id is invalid."]}}}';

const test = base
  // An empty data directory: the CLI makes the database.
  .extend('dataDir', { scope: 'file' }, (): string => newDataDir())
  .extend(
    'cli',
    { scope: 'file' },
    ({ dataDir }) =>
      (...args: string[]): Promise<CliResult> =>
        runCli(args, {
          timeoutMs: 30_000,
          env: { DATA_DIR: dataDir, LOG_LEVEL: 'silent', BOOTSTRAP_API_KEYS: '' },
        }),
  )
  /** What the file holds: each workspace's owner, and how many tokens it has. */
  .extend(
    'workspaces',
    { scope: 'file' },
    ({ dataDir }) =>
      function workspaces(): Record<string, { owner: number | null; tokens: number }> {
        const db = new Database(join(dataDir, DATABASE_FILE), { readonly: true });
        try {
          const rows = db
            .prepare(
              `SELECT w.name, w.user_id AS owner, count(t.id) AS tokens FROM workspaces w
         LEFT JOIN workspace_tokens t ON t.workspace_id = w.id GROUP BY w.id ORDER BY w.name`,
            )
            .all() as { name: string; owner: number | null; tokens: number }[];
          return Object.fromEntries(rows.map(({ name, owner, tokens }) => [name, { owner, tokens }]));
        } finally {
          db.close();
        }
      },
  )
  // Started by the last describe's test, after the CLI made the users and workspaces.
  .extend('gateway', { scope: 'file' }, ({ dataDir, gateways }) =>
    gateways.start(DEFAULT_CONFIG, embeddedEnv(dataDir, { BOOTSTRAP_API_KEYS: '' })),
  )
  .extend('website', { scope: 'file' }, ({ gateway }) => async (key: string, url: string) => {
    const reply = await send(`${gateway.url()}/api/v1/websites`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url }),
    });
    expect(reply.status).toBe(201);
    return (reply.json() as { data: { id: number } }).data.id;
  })
  .extend(
    'init',
    { scope: 'file' },
    ({ gateway }) =>
      (workspace: string, website_id: number) =>
        send(`${gateway.url()}/api/v1/widget/init`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ workspace, website_id }),
        }),
  );

function created(run: CliResult, workspace: string): string {
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  const m = CREATED.exec(run.stdout);
  expect(m?.[2]).toBe(workspace);
  return m![3]!;
}

const keys: Record<string, string> = {};

describe('tollgate tokens create', () => {
  test(
    'with no users yet: a clear error, exit 1, and no workspace',
    { timeout: 60_000 },
    async ({ cli, workspaces }) => {
      expect(await cli('tokens', 'create', '--workspace', 'early')).toEqual({
        code: 1,
        stdout: '',
        stderr:
          'there are no users yet: a workspace belongs to one; create it first with ' +
          '`tollgate users create --name NAME` (or start the gateway once)\n',
      });
      expect(workspaces()).toEqual({});
    },
  );

  test(
    'users come first; without --user the workspace goes to the first user',
    { timeout: 60_000 },
    async ({ cli, workspaces }) => {
      for (const name of ['carol', 'dave']) {
        const run = await cli('users', 'create', '--name', name);
        expect(run.code).toBe(0);
        keys[name] = run.stdout.trim().split('\n')[1]!;
      }
      created(await cli('tokens', 'create', '--workspace', 'carols'), 'carols');
      expect(workspaces()).toEqual({ carols: { owner: 1, tokens: 1 } });
    },
  );

  test(
    '--user names the owner; repeating it or leaving it out keeps that owner',
    { timeout: 60_000 },
    async ({ cli, workspaces }) => {
      created(await cli('tokens', 'create', '--workspace', 'daves', '--user', '2'), 'daves');
      created(await cli('tokens', 'create', '--workspace', 'daves', '--user', '2'), 'daves');
      created(await cli('tokens', 'create', '--workspace', 'daves'), 'daves');
      expect(workspaces()).toEqual({ carols: { owner: 1, tokens: 1 }, daves: { owner: 2, tokens: 3 } });
    },
  );

  test(
    "another user's workspace is not taken over: exit 2, nothing written",
    { timeout: 60_000 },
    async ({ cli, workspaces }) => {
      expect(await cli('tokens', 'create', '--workspace', 'daves', '--user', '1')).toEqual({
        code: 2,
        stdout: '',
        stderr: 'workspace "daves" belongs to user 2, not to user 1\n',
      });
      expect(workspaces()).toEqual({ carols: { owner: 1, tokens: 1 }, daves: { owner: 2, tokens: 3 } });
    },
  );

  test('an unknown user id: exit 2, nothing written', { timeout: 60_000 }, async ({ cli, workspaces }) => {
    expect(await cli('tokens', 'create', '--workspace', 'ghosts', '--user', '99')).toEqual({
      code: 2,
      stdout: '',
      stderr: 'no user with id 99 (`tollgate users list` shows the ids)\n',
    });
    expect(Object.keys(workspaces())).toEqual(['carols', 'daves']);
  });

  test(
    'a --user that is not an id is a usage error (exit 2)',
    { timeout: 60_000 },
    async ({ cli, workspaces }) => {
      const values = ['abc', '0', '1.5'];
      const runs = await Promise.all(
        values.map((v) => cli('tokens', 'create', '--workspace', 'x', '--user', v)),
      );
      runs.forEach((run, i) => {
        expect({ value: values[i], code: run.code, stdout: run.stdout }).toEqual({
          value: values[i],
          code: 2,
          stdout: '',
        });
        expect(run.stderr.startsWith(`--user must be a user id, got "${values[i]}"\nusage:\n`)).toBe(true);
        expect(run.stderr).toContain(
          '  tollgate tokens  create --workspace NAME [--user ID] [--config FILE]\n',
        );
      });
      expect(Object.keys(workspaces())).toEqual(['carols', 'daves']);
    },
  );
});

describe('the owner decides which website_id widget init takes', () => {
  test("a workspace takes its owner's websites only", async ({ website, init }) => {
    const carolSite = await website(keys['carol']!, 'carol.example');
    const daveSite = await website(keys['dave']!, 'dave.example');
    expect((await init('carols', carolSite)).status).toBe(200);
    expect((await init('daves', daveSite)).status).toBe(200);
    const replies = await Promise.all([
      init('carols', daveSite),
      init('daves', carolSite),
      init('carols', daveSite + 100),
    ]);
    expect(replies.map((r) => [r.status, r.text])).toEqual([
      [422, NOT_YOURS],
      [422, NOT_YOURS],
      [422, NOT_YOURS],
    ]);
  });
});
