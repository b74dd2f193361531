// `tollgate users list|rotate-key` and `tollgate tokens list` as an operator runs them, beside a
// real `tollgate start` on the shipped config: the lost first-start key recovered, the old key
// refused at once through the gateway, and lists that show uses but never a secret.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test as base, describe, expect } from 'vitest';
import { runCli, startCli, startGatewayProcess, type CliProcess, type CliResult } from '../helpers/cli.js';
import { firstStartEnv, newDataDir } from '../helpers/embedded.js';
import { send, type Reply } from '../helpers/gateway.js';

const CONFIG = 'config/gateway.yaml';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** One data directory and one `tollgate start` on it (a first start: user 1 "admin") for the file. */
const test = base
  .extend('dataDir', { scope: 'file' }, () => newDataDir())
  .extend('gateway', { scope: 'file' }, async ({ dataDir }, { onCleanup }): Promise<CliProcess> => {
    const gp = await startGatewayProcess(CONFIG, { env: firstStartEnv(dataDir), timeoutMs: 60_000 });
    onCleanup(() => gp.stop().then(() => undefined));
    return gp;
  })
  .extend('cli', { scope: 'file' }, ({ dataDir }) => {
    return (...args: string[]): Promise<CliResult> =>
      runCli(args, { env: firstStartEnv(dataDir, { LOG_LEVEL: 'silent' }) });
  });

const websites = (gp: CliProcess, key: string): Promise<Reply> =>
  send(`${gp.url}/api/v1/websites`, {
    headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
  });

describe('a lost first-start key', () => {
  test(
    'users list shows the admin; rotate-key prints a new key once, and the old one is refused at once',
    { timeout: 90_000 },
    async ({ gateway, dataDir, cli }) => {
      const keyFile = join(dataDir, 'first-start.txt');
      const firstKey = readFileSync(keyFile, 'utf8').trimEnd();
      const before = new Date().toISOString();
      expect((await websites(gateway, firstKey)).status).toBe(200);
      rmSync(keyFile); // lost

      const listed = await cli('users', 'list');
      expect(listed.code).toBe(0);
      expect(listed.stderr).toBe('');
      const lines = listed.stdout.split('\n');
      expect(lines[0]).toBe('ID  NAME   EMAIL  CREATED                   LAST USED');
      expect(lines[1]).toMatch(/^1 {3}admin {2}- {6}\S+Z {2}\S+Z$/);
      expect(lines.slice(2)).toEqual(['']);
      expect(listed.stdout).not.toContain(firstKey);

      const json = await cli('users', 'list', '--json');
      expect(json.code).toBe(0);
      const users = JSON.parse(json.stdout) as { last_used_at: string }[];
      expect(users).toEqual([
        {
          id: 1,
          name: 'admin',
          email: null,
          created_at: expect.stringMatching(ISO),
          last_used_at: expect.stringMatching(ISO),
        },
      ]);
      expect(users[0]!.last_used_at >= before).toBe(true);

      const rotated = await cli('users', 'rotate-key', '1');
      expect(rotated.code).toBe(0);
      expect(rotated.stderr).toBe('');
      const m =
        /^new API key of user 1 "admin" \(shown once; the previous key no longer works\):\n(tg_[A-Za-z0-9_-]{32})\n$/.exec(
          rotated.stdout,
        );
      expect(m).not.toBeNull();
      const newKey = m![1]!;

      // Through the gateway, at once: no restart, no cache to expire.
      const old = await websites(gateway, firstKey);
      expect({ status: old.status, body: old.json() }).toEqual({
        status: 401,
        body: { message: 'Unauthenticated.' },
      });
      expect((await websites(gateway, newKey)).status).toBe(200);

      // The rotated key has not been used until now; the list shows its use.
      const after = JSON.parse((await cli('users', 'list', '--json')).stdout) as { last_used_at: string }[];
      expect(after[0]!.last_used_at >= before).toBe(true);
    },
  );

  test(
    'rotate-key of no such user exits 1; a bad id or extra words exit 2',
    { timeout: 60_000 },
    async ({ cli }) => {
      const missing = await cli('users', 'rotate-key', '99');
      expect(missing).toEqual({
        code: 1,
        stdout: '',
        stderr: 'no user with id 99 (`tollgate users list` shows the ids)\n',
      });
      const bad = await cli('users', 'rotate-key', 'admin');
      expect(bad.code).toBe(2);
      expect(bad.stderr.startsWith('rotate-key must be a user id, got "admin"\nusage:\n')).toBe(true);
      const extra = await cli('users', 'list', 'all');
      expect(extra.code).toBe(2);
      expect(extra.stderr.startsWith('usage: tollgate users create')).toBe(true);
    },
  );

  test(
    "a bootstrap key's user is not rotated: the config would bring the key back",
    { timeout: 60_000 },
    async () => {
      const env = firstStartEnv(newDataDir(), { BOOTSTRAP_API_KEYS: 'tg_provisioned_0123456789' });
      // A service's start applies the bootstrap keys (user 1, "bootstrap-1").
      const service = await startCli(['serve', 'websites', '--config', CONFIG], { env, timeoutMs: 60_000 });
      expect(await service.stop()).toBe(0);
      const refused = await runCli(['users', 'rotate-key', '1', '--config', CONFIG], { env });
      expect(refused).toEqual({
        code: 1,
        stdout: '',
        stderr: "user 1's key is one of services.bootstrapApiKeys (BOOTSTRAP_API_KEYS): change it there\n",
      });
    },
  );
});

describe('tollgate tokens list', () => {
  test(
    'shows ids, workspaces, owners, creation, last use and revocation, never a secret',
    { timeout: 90_000 },
    async ({ gateway, cli }) => {
      const created = await cli('tokens', 'create', '--workspace', 'shop');
      expect(created.code).toBe(0);
      const [, id, secret] = /\(shown once\):\n([0-9a-f]{12})\|(\S+)\n$/.exec(created.stdout)!;

      const unused = await cli('tokens', 'list');
      expect(unused.code).toBe(0);
      expect(unused.stdout.split('\n')[0]).toBe(
        'ID            WORKSPACE  USER  CREATED                   LAST USED  REVOKED',
      );
      expect(unused.stdout).toMatch(new RegExp(`\\n${id}  shop       1     \\S+Z  never      -\\n$`));

      const before = new Date().toISOString();
      const handshake = await send(`${gateway.url}/v1/wp/handshake`, {
        method: 'POST',
        headers: { authorization: `Bearer ${id}|${secret}` },
      });
      expect(handshake.status, handshake.text).toBe(200);

      const revoked = await cli('tokens', 'revoke', id!);
      expect(revoked.code).toBe(0);
      const json = await cli('tokens', 'list', '--json');
      expect(json.code).toBe(0);
      expect(json.stdout).not.toContain(secret!);
      const tokens = JSON.parse(json.stdout) as { last_used_at: string; revoked_at: string }[];
      expect(tokens).toEqual([
        {
          id,
          workspace: 'shop',
          user_id: 1,
          created_at: expect.stringMatching(ISO),
          last_used_at: expect.stringMatching(ISO),
          revoked_at: expect.stringMatching(ISO),
        },
      ]);
      expect(tokens[0]!.last_used_at >= before).toBe(true);
      expect(tokens[0]!.revoked_at >= tokens[0]!.last_used_at).toBe(true);
    },
  );
});
