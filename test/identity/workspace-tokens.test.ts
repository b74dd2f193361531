// Workspace API tokens end to end: issued and revoked by the CLI, verified by the gateway (its
// cached database store keys the wp-plugin limiter), counted in a real Redis.
import { describe, expect } from 'vitest';
import { runCli, type CliResult } from '../helpers/cli.js';
import { burst } from '../helpers/burst.js';
import { expectLimited } from '../helpers/clients.js';
import { DEFAULT_CONFIG } from '../helpers/default-config.js';
import { embeddedEnv, newDataDir, startEmbeddedGateway } from '../helpers/embedded.js';
import { test as base } from '../helpers/fixtures.js';
import { send, type Reply } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';

const WP_MESSAGE = 'Too many bulk-sync requests for this workspace. Please slow down.';
const MISSING = { error: { code: 'missing_token', message: 'API token missing.' } };
const INVALID = { error: { code: 'invalid_token', message: 'API token is invalid or has been revoked.' } };

const test = base
  .extend('dataDir', { scope: 'file' }, (): string => newDataDir())
  .extend('gateway', { scope: 'file' }, ({ dataDir, redis, gateways }) =>
    gateways.start(DEFAULT_CONFIG, embeddedEnv(dataDir, { REDIS_URL: redis.url })),
  )
  /** `tollgate ARGS --config config/gateway.yaml` as a real process on this file's data directory. */
  .extend(
    'cli',
    { scope: 'file' },
    ({ dataDir }) =>
      (args: string[], dir = dataDir): Promise<CliResult> =>
        runCli([...args, '--config', 'config/gateway.yaml'], { env: { DATA_DIR: dir, LOG_LEVEL: 'silent' } }),
  )
  /** A token issued by `tollgate tokens create --workspace NAME`. */
  .extend(
    'issue',
    { scope: 'file' },
    ({ cli }) =>
      async function issue(workspace: string): Promise<{ id: string; token: string }> {
        const run = await cli(['tokens', 'create', '--workspace', workspace]);
        expect(run.code).toBe(0);
        const m = /^created token ([0-9a-f]+) for workspace "([^"]+)" \(shown once\):\n(\S+)\n$/.exec(
          run.stdout,
        );
        expect(m).not.toBeNull();
        expect(m![2]).toBe(workspace);
        expect(m![3]!.startsWith(`${m![1]}|`)).toBe(true);
        return { id: m![1]!, token: m![3]! };
      },
  )
  .extend(
    'handshake',
    { scope: 'file' },
    ({ gateway }) =>
      (authorization?: string, base = gateway.url()): Promise<Reply> =>
        send(`${base}/v1/wp/handshake`, {
          method: 'POST',
          headers: authorization === undefined ? {} : { authorization },
        }),
  );

describe('a token from the CLI', () => {
  test(
    'authenticates the handshake, counted by the wp-plugin limiter (60 per minute)',
    { timeout: 60_000 },
    async ({ issue, handshake }) => {
      const { id, token } = await issue('acme');
      const reply = await handshake(`Bearer ${token}`);
      expect(reply.status).toBe(200);
      expect(reply.headers['x-ratelimit-limit']).toBe('60');
      expect(reply.headers['x-ratelimit-remaining']).toBe('59');
      expect(reply.json()).toMatchObject({ workspace: { name: 'acme' }, token_id: id });
    },
  );

  test(
    'the 61st request of the minute gets the exact 429, on any /v1/wp endpoint',
    { timeout: 60_000 },
    async ({ issue, handshake, gateway }) => {
      const { token } = await issue('busy');
      const authorization = `Bearer ${token}`;
      const replies = await burst(59, () => handshake(authorization), 8);
      expect(replies.map((r) => r.status)).toEqual(Array(59).fill(200));
      const sixtieth = await send(`${gateway.url()}/v1/wp/posts/sync`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: '{"items":[]}',
      });
      expect(sixtieth.status).toBe(200);
      expect(sixtieth.headers['x-ratelimit-remaining']).toBe('0');
      expectLimited(await handshake(authorization), 60, WP_MESSAGE, 60);
      const refusedSync = await send(`${gateway.url()}/v1/wp/coupons/sync`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: '{"items":[]}',
      });
      expectLimited(refusedSync, 60, WP_MESSAGE, 60);

      // Another workspace's token has its own budget.
      const other = await issue('calm');
      expect((await handshake(`Bearer ${other.token}`)).headers['x-ratelimit-remaining']).toBe('59');
    },
  );

  test(
    'a wrong secret for a real id is 401 and does not spend the real token budget',
    { timeout: 60_000 },
    async ({ issue, handshake }) => {
      const { id, token } = await issue('guarded');
      expect((await handshake(`Bearer ${token}`)).headers['x-ratelimit-remaining']).toBe('59');
      for (let i = 0; i < 5; i++) {
        const forged = await handshake(`Bearer ${id}|guessed-secret-${i}`);
        expect({ status: forged.status, body: forged.json() }).toEqual({ status: 401, body: INVALID });
      }
      expect((await handshake(`Bearer ${token}`)).headers['x-ratelimit-remaining']).toBe('58');
    },
  );

  test(
    'no token, or one of the wrong shape, is 401 with the original bodies',
    { timeout: 60_000 },
    async ({ handshake }) => {
      for (const authorization of [undefined, 'Basic dXNlcjpwYXNz', 'Bearer']) {
        const reply = await handshake(authorization);
        expect({ status: reply.status, body: reply.json() }).toEqual({ status: 401, body: MISSING });
        expect(reply.headers['x-ratelimit-limit']).toBe('60');
      }
      for (const authorization of ['Bearer no-bar', 'Bearer |secret', 'Bearer id|']) {
        const reply = await handshake(authorization);
        expect({ status: reply.status, body: reply.json() }).toEqual({ status: 401, body: INVALID });
      }
    },
  );

  test(
    'revoked with the CLI: refused within the 5 s cache time, and not before the revoke',
    { timeout: 60_000 },
    async ({ cli, issue, handshake }) => {
      const { id, token } = await issue('leaving');
      expect((await handshake(`Bearer ${token}`)).status).toBe(200);
      expect((await handshake(`Bearer ${token}`)).status).toBe(200); // now cached by the gateway

      const revoke = await cli(['tokens', 'revoke', id]);
      expect(revoke).toEqual({ code: 0, stdout: `revoked token ${id}\n`, stderr: '' });
      const revokedAt = Date.now();
      const refused = await waitFor(
        () => handshake(`Bearer ${token}`),
        (r) => r.status !== 200,
        { timeoutMs: 6000, intervalMs: 200, what: 'the revoked token to be refused' },
      );
      expect(Date.now() - revokedAt).toBeLessThan(6000);
      expect({ status: refused.status, body: refused.json() }).toEqual({ status: 401, body: INVALID });

      const again = await cli(['tokens', 'revoke', id]);
      expect(again).toEqual({ code: 1, stdout: '', stderr: `no live token with id "${id}"\n` });
    },
  );
});

describe('BOOTSTRAP_WORKSPACE_TOKEN', () => {
  test(
    'ensures the token at start, in BOOTSTRAP_WORKSPACE, and restores it after a revoke',
    { timeout: 60_000 },
    async ({ cli, handshake, redis }) => {
      const bootDir = newDataDir();
      const env = {
        REDIS_URL: redis.url,
        BOOTSTRAP_WORKSPACE_TOKEN: 'boot7|the-bootstrap-secret',
        BOOTSTRAP_WORKSPACE: 'main-shop',
      };
      let boot = await startEmbeddedGateway(bootDir, env);
      try {
        const reply = await handshake('Bearer boot7|the-bootstrap-secret', boot.url());
        expect(reply.status).toBe(200);
        expect(reply.json()).toMatchObject({ workspace: { name: 'main-shop' }, token_id: 'boot7' });
        expect((await handshake('Bearer boot7|another-secret', boot.url())).json()).toEqual(INVALID);

        expect((await cli(['tokens', 'revoke', 'boot7'], bootDir)).code).toBe(0);
        expect((await handshake('Bearer boot7|the-bootstrap-secret', boot.url())).json()).toEqual(INVALID);

        await boot.close();
        boot = await startEmbeddedGateway(bootDir, env);
        expect((await handshake('Bearer boot7|the-bootstrap-secret', boot.url())).status).toBe(200);
      } finally {
        await boot.close();
      }
    },
  );
});
