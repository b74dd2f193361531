// The bulk-sync endpoints (/v1/wp/*) through the real gateway, a real Redis and the SQLite file.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DATABASE_FILE, openDatabase, type Db } from '../../../src/db/database.js';
import type { Gateway } from '../../../src/runtime/gateway.js';
import { createWorkspaceToken, findWorkspace } from '../../../src/services/accounts/workspaces.js';
import { newDataDir, startEmbeddedGateway } from '../../helpers/embedded.js';
import { send, type Reply } from '../../helpers/gateway.js';
import { RedisServer } from '../../helpers/redis-server.js';
import { untilClockPast } from '../../helpers/wait.js';

let redis: RedisServer;
let gateway: Gateway;
let dataDir: string;
/** A second connection to the gateway's database file: issues tokens and reads rows, as an operator would. */
let db: Db;
let workspaces = 0;

beforeAll(async () => {
  redis = await RedisServer.start();
  dataDir = newDataDir();
  gateway = await startEmbeddedGateway(dataDir, { REDIS_URL: redis.url });
  db = openDatabase(dataDir);
});
afterAll(async () => {
  db?.close();
  await gateway?.close();
  await redis?.kill();
});

/** A new workspace with its own token (and so its own wp-plugin budget). */
function newWorkspace(): { name: string; id: number; token: string } {
  const name = `shop-${++workspaces}`;
  const { token } = createWorkspaceToken(db, name);
  return { name, id: findWorkspace(db, name)!.id, token };
}

const wp = (path: string, token: string | undefined, body?: unknown, headers: Record<string, string> = {}) =>
  send(`${gateway.url()}/v1/wp/${path}`, {
    method: 'POST',
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });

/** Every row of the workspace in `table`, as stored in the SQLite file. */
function rows(table: 'posts' | 'products' | 'coupons', workspaceId: number): unknown[] {
  const reader = new Database(join(dataDir, DATABASE_FILE), { readonly: true });
  try {
    return reader
      .prepare(`SELECT * FROM ${table} WHERE workspace_id = ? ORDER BY external_id`)
      .all(workspaceId);
  } finally {
    reader.close();
  }
}

const expectJson = (reply: Reply, status: number, body: unknown) => {
  expect({ status: reply.status, type: reply.headers['content-type'], body: reply.json() }).toEqual({
    status,
    type: expect.stringMatching(/^application\/json/),
    body,
  });
};

const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const validationFailed = (fields: Record<string, string[]>) => ({
  error: { code: 'validation_failed', message: 'The given data was invalid.', fields },
});
const post = (id: string | number, title = `Post ${id}`, extra: object = {}) => ({
  id,
  title,
  url: `https://shop.example/p/${id}`,
  ...extra,
});

describe('POST /v1/wp/handshake', () => {
  test('names the workspace and what it holds, with the wp-plugin rate-limit headers', async () => {
    const ws = newWorkspace();
    const reply = await wp('handshake', ws.token);
    expectJson(reply, 200, {
      workspace: { id: ws.id, name: ws.name },
      token_id: ws.token.split('|')[0],
      counts: { posts: 0, products: 0, coupons: 0 },
      last_sync: { posts: null, products: null, coupons: null },
      limits: { batch_size: 500, max_body_bytes: 5 * 1024 * 1024 },
    });
    expect(reply.headers['x-ratelimit-limit']).toBe('60');
    expect(reply.headers['x-ratelimit-remaining']).toBe('59');

    const synced = await wp('posts/sync', ws.token, { items: [post(1), post(2)] });
    expect(synced.status).toBe(200);
    const after = await wp('handshake', ws.token);
    expectJson(after, 200, {
      workspace: { id: ws.id, name: ws.name },
      token_id: ws.token.split('|')[0],
      counts: { posts: 2, products: 0, coupons: 0 },
      last_sync: { posts: ISO, products: null, coupons: null },
      limits: { batch_size: 500, max_body_bytes: 5 * 1024 * 1024 },
    });
  });
});

describe('token errors, on every endpoint', () => {
  const paths = [
    'handshake',
    'posts/sync',
    'posts/changed',
    'products/sync',
    'products/changed',
    'coupons/sync',
  ];

  test.each(paths)('%s: 401 missing_token without a token, invalid_token with a bad one', async (path) => {
    const ws = newWorkspace();
    const [id] = ws.token.split('|');
    const missing = await wp(path, undefined, { items: [] });
    expectJson(missing, 401, { error: { code: 'missing_token', message: 'API token missing.' } });
    expect(missing.headers['x-ratelimit-limit']).toBe('60');
    for (const bad of [`${id}|wrong-secret`, 'no-bar', 'unknown|secret']) {
      expectJson(await wp(path, bad, { items: [] }), 401, {
        error: { code: 'invalid_token', message: 'API token is invalid or has been revoked.' },
      });
    }
    expect(rows('posts', ws.id)).toEqual([]);
  });

  test('an unknown /v1/wp path with a valid token is a JSON 404', async () => {
    const ws = newWorkspace();
    expectJson(await wp('pages/sync', ws.token, { items: [] }), 404, {
      error: { code: 'not_found', message: 'Resource not found.' },
    });
  });
});

describe('POST /v1/wp/coupons/sync (the contract with the widget)', () => {
  const save10 = {
    id: 'c1',
    code: 'SAVE10',
    discount_type: 'percent',
    amount: 10,
    expires_at: null,
    usage_limit: null,
    usage_count: 0,
  };

  test('stores the coupons as the widget reads them; a full sync without one removes it', async () => {
    const ws = newWorkspace();
    const first = await wp('coupons/sync', ws.token, { items: [save10], done: true });
    expectJson(first, 200, {
      sync_id: expect.any(String),
      kind: 'coupons',
      received: 1,
      created: 1,
      updated: 0,
      unchanged: 0,
      deleted: 0,
      done: true,
      total: 1,
    });
    expect(rows('coupons', ws.id)).toEqual([
      {
        workspace_id: ws.id,
        external_id: 'c1',
        code: 'SAVE10',
        discount_type: 'percent',
        amount: 10,
        expires_at: null,
        usage_limit: null,
        usage_count: 0,
        synced_at: ISO,
      },
    ]);

    const fixed = {
      id: 7,
      code: 'minus5',
      discount_type: 'fixed',
      amount: 5.5,
      expires_at: '2030-01-01T12:00:00+02:00',
      usage_limit: 100,
      usage_count: 3,
    };
    const second = await wp('coupons/sync', ws.token, { items: [fixed] });
    expectJson(second, 200, {
      sync_id: expect.any(String),
      kind: 'coupons',
      received: 1,
      created: 1,
      updated: 0,
      unchanged: 0,
      deleted: 1,
      done: true,
      total: 1,
    });
    expect(rows('coupons', ws.id)).toEqual([
      {
        workspace_id: ws.id,
        external_id: '7',
        code: 'minus5',
        discount_type: 'fixed',
        amount: 5.5,
        expires_at: '2030-01-01T10:00:00.000Z',
        usage_limit: 100,
        usage_count: 3,
        synced_at: ISO,
      },
    ]);
  });
});

describe('POST /v1/wp/posts/sync', () => {
  test('the same full sync twice changes nothing: not a value, not a timestamp', async () => {
    const ws = newWorkspace();
    const items = [
      post(1, 'Hello', {
        content: '<p>Hi</p>',
        excerpt: 'Hi',
        status: 'publish',
        modified_at: '2024-05-01T10:00:00+02:00',
      }),
      post('two', 'Second'),
      post(3, 'Third', { status: 'draft', content: '' }),
    ];
    const first = await wp('posts/sync', ws.token, { sync_id: 'nightly', items });
    expectJson(first, 200, {
      sync_id: 'nightly',
      kind: 'posts',
      received: 3,
      created: 3,
      updated: 0,
      unchanged: 0,
      deleted: 0,
      done: true,
      total: 3,
    });
    const stored = rows('posts', ws.id);
    expect(stored).toEqual([
      {
        workspace_id: ws.id,
        external_id: '1',
        title: 'Hello',
        url: 'https://shop.example/p/1',
        content: '<p>Hi</p>',
        excerpt: 'Hi',
        status: 'publish',
        modified_at: '2024-05-01T08:00:00.000Z',
        created_at: ISO,
        updated_at: ISO,
      },
      {
        workspace_id: ws.id,
        external_id: '3',
        title: 'Third',
        url: 'https://shop.example/p/3',
        content: null,
        excerpt: null,
        status: 'draft',
        modified_at: null,
        created_at: ISO,
        updated_at: ISO,
      },
      {
        workspace_id: ws.id,
        external_id: 'two',
        title: 'Second',
        url: 'https://shop.example/p/two',
        content: null,
        excerpt: null,
        status: null,
        modified_at: null,
        created_at: ISO,
        updated_at: ISO,
      },
    ]);

    const again = await wp('posts/sync', ws.token, { sync_id: 'nightly', items });
    expectJson(again, 200, {
      sync_id: 'nightly',
      kind: 'posts',
      received: 3,
      created: 0,
      updated: 0,
      unchanged: 3,
      deleted: 0,
      done: true,
      total: 3,
    });
    expect(rows('posts', ws.id)).toEqual(stored);
  });

  test('a changed item is updated (only its updated_at moves); items missing from the sync are removed', async () => {
    const ws = newWorkspace();
    await wp('posts/sync', ws.token, { items: [post(1), post(2), post(3)] });
    const before = rows('posts', ws.id) as Record<string, unknown>[];
    // So that a moved timestamp would differ from every stored one.
    await untilClockPast(Math.max(...before.map((row) => Date.parse(String(row['updated_at'])))));

    const reply = await wp('posts/sync', ws.token, { items: [post(1), post(2, 'Renamed')] });
    expectJson(reply, 200, {
      sync_id: expect.any(String),
      kind: 'posts',
      received: 2,
      created: 0,
      updated: 1,
      unchanged: 1,
      deleted: 1,
      done: true,
      total: 2,
    });
    const after = rows('posts', ws.id) as Record<string, unknown>[];
    expect(after[0]).toEqual(before[0]);
    expect(after[1]).toEqual({ ...before[1], title: 'Renamed', updated_at: ISO });
    expect(after[1]!['updated_at']).not.toBe(before[1]!['updated_at']);
    expect(after).toHaveLength(2);
  });

  test('an empty completed sync removes every post of the workspace, and only of that workspace', async () => {
    const a = newWorkspace();
    const b = newWorkspace();
    await wp('posts/sync', a.token, { items: [post(1), post(2)] });
    await wp('posts/sync', b.token, { items: [post(1)] });
    expectJson(await wp('posts/sync', a.token, { items: [] }), 200, {
      sync_id: expect.any(String),
      kind: 'posts',
      received: 0,
      created: 0,
      updated: 0,
      unchanged: 0,
      deleted: 2,
      done: true,
      total: 0,
    });
    expect(rows('posts', a.id)).toEqual([]);
    expect(rows('posts', b.id)).toHaveLength(1);
  });

  test('a sync in several batches removes the missing items only when its last batch completes it', async () => {
    const ws = newWorkspace();
    await wp('posts/sync', ws.token, { items: [post('old'), post('a', 'Old A')] });
    const syncedAt = ((await wp('handshake', ws.token)).json() as { last_sync: { posts: string } }).last_sync
      .posts;

    const batch1 = await wp('posts/sync', ws.token, { sync_id: 'run-1', done: false, items: [post('a')] });
    expectJson(batch1, 200, {
      sync_id: 'run-1',
      kind: 'posts',
      received: 1,
      created: 0,
      updated: 1,
      unchanged: 0,
      deleted: 0,
      done: false,
      total: 2,
    });
    const midway = (await wp('handshake', ws.token)).json() as { last_sync: { posts: string } };
    expect(midway.last_sync.posts).toBe(syncedAt);

    const batch2 = await wp('posts/sync', ws.token, { sync_id: 'run-1', done: true, items: [post('b')] });
    expectJson(batch2, 200, {
      sync_id: 'run-1',
      kind: 'posts',
      received: 1,
      created: 1,
      updated: 0,
      unchanged: 0,
      deleted: 1,
      done: true,
      total: 2,
    });
    expect((rows('posts', ws.id) as { external_id: string }[]).map((r) => r.external_id)).toEqual(['a', 'b']);
    const done = (await wp('handshake', ws.token)).json() as { last_sync: { posts: string } };
    expect(done.last_sync.posts > syncedAt).toBe(true);
  });

  test('a retried final batch (after a timeout, say) deletes nothing more: the catalogue stays whole', async () => {
    const ws = newWorkspace();
    await wp('posts/sync', ws.token, { items: [post('old')] });
    await wp('posts/sync', ws.token, { sync_id: 'S', done: false, items: [post(1), post(2)] });
    const last = { sync_id: 'S', done: true, items: [post(3)] };
    const result = {
      sync_id: 'S',
      kind: 'posts',
      received: 1,
      created: 1,
      updated: 0,
      unchanged: 0,
      deleted: 1,
      done: true,
      total: 3,
    };
    expectJson(await wp('posts/sync', ws.token, last), 200, result);
    const completed = (await wp('handshake', ws.token)).json();

    expectJson(await wp('posts/sync', ws.token, last), 200, {
      ...result,
      created: 0,
      unchanged: 1,
      deleted: 0,
    });
    // A late retry of an earlier batch of the completed sync neither reopens it nor removes anything.
    expectJson(
      await wp('posts/sync', ws.token, { sync_id: 'S', done: false, items: [post(1), post(2)] }),
      200,
      {
        ...result,
        received: 2,
        created: 0,
        unchanged: 2,
        deleted: 0,
        done: false,
      },
    );
    expectJson(await wp('posts/sync', ws.token, last), 200, {
      ...result,
      created: 0,
      unchanged: 1,
      deleted: 0,
    });
    expect((rows('posts', ws.id) as { external_id: string }[]).map((r) => r.external_id)).toEqual([
      '1',
      '2',
      '3',
    ]);
    // The sync completed once: its completion time does not move.
    expect((await wp('handshake', ws.token)).json()).toEqual(completed);
  });

  test('interleaved full syncs: the newer sync_id supersedes the open one, whose later batches get 409', async () => {
    const ws = newWorkspace();
    const batch = (syncId: string, ids: number[], done: boolean) =>
      wp('posts/sync', ws.token, { sync_id: syncId, done, items: ids.map((id) => post(id)) });
    const refused = {
      error: {
        code: 'sync_superseded',
        message:
          'The full sync "A" of posts was superseded by a newer full sync of posts (another sync_id); ' +
          'its remaining batches are refused.',
      },
    };
    expect((await batch('A', [1, 2], false)).status).toBe(200);
    expect((await batch('B', [3, 4], false)).status).toBe(200);
    const a2 = await batch('A', [5], true);
    expectJson(a2, 409, refused);
    expect(a2.headers['x-ratelimit-limit']).toBe('60');
    // Nothing of the refused batch was written: no post 5.
    expect((rows('posts', ws.id) as { external_id: string }[]).map((r) => r.external_id)).toEqual([
      '1',
      '2',
      '3',
      '4',
    ]);
    expectJson(await batch('B', [6], true), 200, {
      sync_id: 'B',
      kind: 'posts',
      received: 1,
      created: 1,
      updated: 0,
      unchanged: 0,
      deleted: 2,
      done: true,
      total: 3,
    });
    // The newest full sync decides: exactly what B carried, A's items gone, and A stays refused.
    expect((rows('posts', ws.id) as { external_id: string }[]).map((r) => r.external_id)).toEqual([
      '3',
      '4',
      '6',
    ]);
    expectJson(await batch('A', [1, 2], false), 409, refused);
    expect((rows('posts', ws.id) as { external_id: string }[]).map((r) => r.external_id)).toEqual([
      '3',
      '4',
      '6',
    ]);
    // Another kind, and a fresh sync of the same kind, are not affected.
    expect((await wp('products/sync', ws.token, { sync_id: 'A', items: [] })).status).toBe(200);
    expect(((await batch('C', [7], true)).json() as { total: number }).total).toBe(1);
  });

  // The tables of 422 messages are in validation.unit.test.ts (the service alone); this is the one end to end.
  test("a 422 comes through the gateway in the service's shape, with the wp-plugin rate-limit headers", async () => {
    const ws = newWorkspace();
    const reply = await wp('posts/sync', ws.token, {});
    expectJson(reply, 422, validationFailed({ items: ['The items field is required.'] }));
    expect(reply.headers['x-ratelimit-limit']).toBe('60');
    expect(reply.headers['x-ratelimit-remaining']).toBe('59');
    expect(rows('posts', ws.id)).toEqual([]);
  });

  test('a batch of exactly 500 items is accepted in one transaction', async () => {
    const ws = newWorkspace();
    const items = Array.from({ length: 500 }, (_, i) => post(i));
    expectJson(await wp('posts/sync', ws.token, { items }), 200, {
      sync_id: expect.any(String),
      kind: 'posts',
      received: 500,
      created: 500,
      updated: 0,
      unchanged: 0,
      deleted: 0,
      done: true,
      total: 500,
    });
  });

  test('JSON only: a form body is 415, malformed JSON is 400, and nothing is written', async () => {
    const ws = newWorkspace();
    expectJson(
      await wp('posts/sync', ws.token, 'items=1', { 'content-type': 'application/x-www-form-urlencoded' }),
      415,
      { error: { code: 'unsupported_media_type', message: 'Send the request body as application/json.' } },
    );
    expectJson(await wp('posts/sync', ws.token, '{"items": [', {}), 400, {
      error: { code: 'bad_request', message: 'The JSON body is malformed.' },
    });
    expect(rows('posts', ws.id)).toEqual([]);
  });
});

describe('POST /v1/wp/products/sync', () => {
  test('stores products with their defaults; resending them changes nothing', async () => {
    const ws = newWorkspace();
    const items = [
      { id: 10, name: 'Mug', url: 'https://shop.example/mug', price: 12.5 },
      {
        id: 'tee',
        name: 'T-shirt',
        url: 'http://shop.example/tee',
        price: 0,
        currency: 'eur',
        sku: 'TEE-1',
        stock_status: 'onbackorder',
        description: 'Cotton',
      },
    ];
    expectJson(await wp('products/sync', ws.token, { items }), 200, {
      sync_id: expect.any(String),
      kind: 'products',
      received: 2,
      created: 2,
      updated: 0,
      unchanged: 0,
      deleted: 0,
      done: true,
      total: 2,
    });
    const stored = rows('products', ws.id);
    expect(stored).toEqual([
      {
        workspace_id: ws.id,
        external_id: '10',
        name: 'Mug',
        url: 'https://shop.example/mug',
        price: 12.5,
        currency: 'USD',
        sku: null,
        stock_status: null,
        description: null,
        created_at: ISO,
        updated_at: ISO,
      },
      {
        workspace_id: ws.id,
        external_id: 'tee',
        name: 'T-shirt',
        url: 'http://shop.example/tee',
        price: 0,
        currency: 'EUR',
        sku: 'TEE-1',
        stock_status: 'onbackorder',
        description: 'Cotton',
        created_at: ISO,
        updated_at: ISO,
      },
    ]);
    expectJson(await wp('products/sync', ws.token, { items }), 200, {
      sync_id: expect.any(String),
      kind: 'products',
      received: 2,
      created: 0,
      updated: 0,
      unchanged: 2,
      deleted: 0,
      done: true,
      total: 2,
    });
    expect(rows('products', ws.id)).toEqual(stored);
  });
});

describe('POST /v1/wp/{posts,products}/changed', () => {
  test('upserts and deletes items; unknown deleted ids are ignored', async () => {
    const ws = newWorkspace();
    await wp('posts/sync', ws.token, { items: [post(1), post(2), post(3)] });
    const reply = await wp('posts/changed', ws.token, {
      upserted: [post(1), post(2, 'Edited'), post(4)],
      deleted: [3, 'never-synced'],
    });
    expectJson(reply, 200, { kind: 'posts', created: 1, updated: 1, unchanged: 1, deleted: 1, total: 3 });
    expect(
      (rows('posts', ws.id) as { external_id: string; title: string }[]).map((r) => [r.external_id, r.title]),
    ).toEqual([
      ['1', 'Post 1'],
      ['2', 'Edited'],
      ['4', 'Post 4'],
    ]);
    expectJson(await wp('posts/changed', ws.token, {}), 200, {
      kind: 'posts',
      created: 0,
      updated: 0,
      unchanged: 0,
      deleted: 0,
      total: 3,
    });
  });

  test('products: a price change is an update, a deletion removes the row', async () => {
    const ws = newWorkspace();
    const mug = { id: 'mug', name: 'Mug', url: 'https://shop.example/mug', price: 10 };
    await wp('products/sync', ws.token, { items: [mug, { ...mug, id: 'cup', name: 'Cup' }] });
    expectJson(
      await wp('products/changed', ws.token, { upserted: [{ ...mug, price: 9 }], deleted: ['cup'] }),
      200,
      {
        kind: 'products',
        created: 0,
        updated: 1,
        unchanged: 0,
        deleted: 1,
        total: 1,
      },
    );
    expect(rows('products', ws.id)).toEqual([
      expect.objectContaining({ external_id: 'mug', price: 9, currency: 'USD' }),
    ]);
  });

  test('an item upserted during a multi-batch full sync survives the sync completing', async () => {
    const ws = newWorkspace();
    await wp('posts/sync', ws.token, { sync_id: 'big', done: false, items: [post(1)] });
    await wp('posts/changed', ws.token, { upserted: [post('fresh')] });
    const done = await wp('posts/sync', ws.token, { sync_id: 'big', items: [post(2)] });
    expect((done.json() as { deleted: number; total: number }).total).toBe(3);
    expect((rows('posts', ws.id) as { external_id: string }[]).map((r) => r.external_id)).toEqual([
      '1',
      '2',
      'fresh',
    ]);
  });

  test('coupons have no incremental endpoint', async () => {
    const ws = newWorkspace();
    expectJson(await wp('coupons/changed', ws.token, { upserted: [] }), 404, {
      error: { code: 'not_found', message: 'Resource not found.' },
    });
  });
});
