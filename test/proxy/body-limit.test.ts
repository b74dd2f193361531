// The body bound on bulk sync: the gateway's wp-plugin route (here 1kb, below the service's own 5mb)
// refuses a larger body before the upstream sees any of it, and the service, run alone with
// MAX_BODY_SIZE=1kb, refuses it too.
import { Readable } from 'node:stream';
import { request } from 'undici';
import { describe, expect } from 'vitest';
import { servicesConfigFrom } from '../../src/cli/services-config.js';
import { loadConfigText } from '../../src/rules/load.js';
import { openDatabase } from '../../src/db/database.js';
import { openServiceDatabase, startService } from '../../src/services/registry.js';
import { createWorkspaceToken, revokeWorkspaceToken } from '../../src/services/accounts/workspaces.js';
import { DEFAULT_CONFIG } from '../helpers/default-config.js';
import { embeddedEnv, newDataDir } from '../helpers/embedded.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { send, silentLogger, type Reply } from '../helpers/gateway.js';

const LIMIT = 1024;
const EXCEEDS = { error: { code: 'payload_too_large', message: `The request body exceeds ${LIMIT} bytes.` } };

/** The shipped config with the wp-plugin route's bound alone lowered: the service keeps its 5mb. */
const ROUTE_BOUND_CONFIG = (() => {
  const shipped =
    'limiters: [wp-plugin]\n    # Refused with 413 here, before it reaches the upstream.\n    maxBodySize: ${MAX_BODY_SIZE:-5mb}\n';
  expect(DEFAULT_CONFIG.split(shipped)).toHaveLength(2);
  return DEFAULT_CONFIG.replace(shipped, shipped.replace('${MAX_BODY_SIZE:-5mb}', '1kb'));
})();

/** The workspace token the gateway's service bootstraps. */
const TOKEN = 'limits|secret-of-the-body-limit-test';

/**
 * - `dataDir`, `gateway`: ROUTE_BOUND_CONFIG's gateway with its embedded services, and their data directory;
 * - `alone`: the bulk-sync service alone with MAX_BODY_SIZE=1kb, its database, and a token of its own;
 *   `direct` posts to it.
 */
const test = serversTest
  .extend('dataDir', { scope: 'file' }, (): string => newDataDir())
  .extend('gateway', { scope: 'file' }, ({ dataDir, redis, gateways }) =>
    gateways.start(
      ROUTE_BOUND_CONFIG,
      embeddedEnv(dataDir, {
        REDIS_URL: redis.url,
        BOOTSTRAP_WORKSPACE_TOKEN: TOKEN,
        BOOTSTRAP_WORKSPACE: 'limits',
      }),
    ),
  )
  .extend('alone', { scope: 'file' }, async ({}, { onCleanup }) => {
    const config = servicesConfigFrom(
      loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', embeddedEnv(newDataDir(), { MAX_BODY_SIZE: '1kb' }))
        .config,
    );
    const db = openServiceDatabase(config, silentLogger);
    const own = createWorkspaceToken(db, 'alone').token;
    const service = await startService('bulksync', { db, config, logger: silentLogger }, '127.0.0.1', 0);
    onCleanup(async () => {
      await service.close();
      db.close();
    });
    return { db, own, service };
  })
  .extend(
    'direct',
    { scope: 'file' },
    ({ alone }) =>
      (path: string, headers: Record<string, string>, body?: string): Promise<Reply> =>
        send(`${alone.service.url}/v1/wp/${path}`, { method: 'POST', headers, body }),
  );

/** A full sync of posts whose JSON is exactly `bytes` long (with `envelope`: sync_id, done). */
function syncBody(bytes: number, envelope: object = {}): string {
  const item = (content: string) => ({ id: 1, title: 'Long', url: 'https://shop.example/1', content });
  const base = JSON.stringify({ ...envelope, items: [item('')] });
  const body = JSON.stringify({ ...envelope, items: [item('x'.repeat(bytes - base.length))] });
  expect(body.length).toBe(bytes);
  return body;
}

const auth = () => ({ authorization: `Bearer ${TOKEN}` });

async function postCount(base: string): Promise<number> {
  const reply = await send(`${base}/v1/wp/handshake`, { method: 'POST', headers: auth() });
  expect(reply.status).toBe(200);
  return (reply.json() as { counts: { posts: number } }).counts.posts;
}

/** The state of the full sync `syncId` the gateway's service recorded (undefined: it never saw one). */
function syncRun(dataDir: string, syncId: string): string | undefined {
  const db = openDatabase(dataDir);
  try {
    return db.prepare('SELECT state FROM sync_runs WHERE sync_id = ?').pluck().get(syncId) as
      string | undefined;
  } finally {
    db.close();
  }
}

describe('through the gateway', () => {
  test('a body of exactly the bound is synced, and the handshake announces the bound', async ({
    gateway,
    dataDir,
  }) => {
    const reply = await send(`${gateway.url()}/v1/wp/posts/sync`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: syncBody(LIMIT, { sync_id: 'exact' }),
    });
    expect(reply.status).toBe(200);
    expect(reply.json()).toMatchObject({ created: 1, total: 1 });
    // What the service records of a sync it received (the tests below find none).
    expect(syncRun(dataDir, 'exact')).toBe('completed');
    const handshake = await send(`${gateway.url()}/v1/wp/handshake`, { method: 'POST', headers: auth() });
    expect((handshake.json() as { limits: object }).limits).toEqual({
      batch_size: 500,
      max_body_bytes: LIMIT,
    });
  });

  test('a Content-Length over the route bound: the gateway answers 413 with the rate-limit headers, the service sees nothing', async ({
    gateway,
    dataDir,
  }) => {
    const handshake = await send(`${gateway.url()}/v1/wp/handshake`, { method: 'POST', headers: auth() });
    const before = (handshake.json() as { counts: { posts: number } }).counts.posts;
    const remaining = Number(handshake.headers['x-ratelimit-remaining']);
    // Well under the service's own 5mb: only the gateway can refuse it.
    const reply = await send(`${gateway.url()}/v1/wp/posts/sync`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: syncBody(LIMIT + 1, { sync_id: 'over', done: false }),
    });
    expect(reply.status).toBe(413);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.headers['connection']).toBe('close');
    expect(reply.json()).toEqual(EXCEEDS);
    expect(reply.headers['x-ratelimit-limit']).toBe('60');
    // The refused request is counted: one less than after the handshake just before it.
    expect(reply.headers['x-ratelimit-remaining']).toBe(String(remaining - 1));
    expect(reply.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
    expect(await postCount(gateway.url())).toBe(before);
    expect(syncRun(dataDir, 'over')).toBeUndefined();
  });

  test('a chunked body is cut off at the first byte past the bound: 413, nothing stored', async ({
    gateway,
    dataDir,
  }) => {
    const before = await postCount(gateway.url());
    // A complete, valid sync of a new post: the upstream would store it if it ever got it whole.
    const body = JSON.stringify({
      items: [{ id: 'chunked', title: 'Chunked', url: 'https://shop.example/c', content: 'y'.repeat(3000) }],
      done: false,
      sync_id: 'chunked',
    });
    async function* chunks() {
      for (let i = 0; i < body.length; i += 256) yield Buffer.from(body.slice(i, i + 256));
    }
    const res = await request(`${gateway.url()}/v1/wp/posts/sync`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: Readable.from(chunks()),
    });
    const text = await res.body.text();
    expect(res.statusCode).toBe(413);
    expect(res.headers['connection']).toBe('close');
    expect(res.headers['x-ratelimit-limit']).toBe('60');
    expect(JSON.parse(text)).toEqual(EXCEEDS);
    expect(await postCount(gateway.url())).toBe(before);
    expect(syncRun(dataDir, 'chunked')).toBeUndefined();
  });
});

describe('the service alone (tollgate serve bulksync)', () => {
  test('answers 413 in the bulk-sync error shape and stores nothing', async ({ alone: { own }, direct }) => {
    const reply = await direct(
      'posts/sync',
      { authorization: `Bearer ${own}`, 'content-type': 'application/json' },
      syncBody(LIMIT + 1),
    );
    expect(reply.status).toBe(413);
    expect(reply.json()).toEqual({
      error: { code: 'payload_too_large', message: 'The request body is too large.' },
    });
    const handshake = await direct('handshake', { authorization: `Bearer ${own}` });
    expect((handshake.json() as { counts: object }).counts).toEqual({ posts: 0, products: 0, coupons: 0 });
  });

  test('checks the token itself: missing, invalid, and revoked at once', async ({
    alone: { db, own },
    direct,
  }) => {
    expect((await direct('handshake', {})).json()).toEqual({
      error: { code: 'missing_token', message: 'API token missing.' },
    });
    const invalid = {
      error: { code: 'invalid_token', message: 'API token is invalid or has been revoked.' },
    };
    const [id] = own.split('|');
    const wrong = await direct('handshake', { authorization: `Bearer ${id}|not-the-secret` });
    expect({ status: wrong.status, body: wrong.json() }).toEqual({ status: 401, body: invalid });

    const doomed = createWorkspaceToken(db, 'alone');
    expect((await direct('handshake', { authorization: `Bearer ${doomed.token}` })).status).toBe(200);
    expect(revokeWorkspaceToken(db, doomed.id)).toBe(true);
    const revoked = await direct('handshake', { authorization: `Bearer ${doomed.token}` });
    expect({ status: revoked.status, body: revoked.json() }).toEqual({ status: 401, body: invalid });
  });
});
