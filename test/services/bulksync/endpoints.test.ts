// The bulk-sync endpoints (/v1/wp/*) through the real gateway, a real Redis and the SQLite file.
import { describe, expect } from 'vitest';
import { createWorkspaceToken, findWorkspace } from '../../../src/services/accounts/workspaces.js';
import { embeddedTest } from '../../helpers/fixtures.js';
import { send, type Reply } from '../../helpers/gateway.js';
import { untilClockPast } from '../../helpers/wait.js';
import { batchResult, expectJson, ISO, NOT_FOUND, post, SAVE10, validationFailed } from './items.js';

type Table = 'posts' | 'products' | 'coupons';

/** A workspace with its own token (and so its own wp-plugin budget). */
interface Workspace {
  readonly name: string;
  readonly id: number;
  readonly token: string;
  /** POSTs `body` (JSON, or a string as is) to /v1/wp/<path> with the workspace's token. */
  wp(path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
  /** Every row of the workspace in `table`, as stored in the SQLite file. */
  rows(table: Table): unknown[];
  /** The external ids of those rows, in order. */
  ids(table?: Table): string[];
  /** The handshake's last_sync.posts. */
  lastPostsSync(): Promise<string>;
}

const test = embeddedTest({ redis: true })
  /** POSTs to /v1/wp/<path> through the gateway, with `token` as the bearer if given. */
  .extend(
    'wp',
    { scope: 'file' },
    ({ gateway }) =>
      (path: string, token: string | undefined, body?: unknown, headers: Record<string, string> = {}) =>
        send(`${gateway.url()}/v1/wp/${path}`, {
          method: 'POST',
          headers: {
            ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...headers,
          },
          body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
        }),
  )
  /** A new workspace; its token issued on the operator's connection (`db`). */
  .extend('newWorkspace', { scope: 'file' }, ({ db, wp }) => {
    let workspaces = 0;
    return (): Workspace => {
      const name = `shop-${++workspaces}`;
      const { token } = createWorkspaceToken(db, name);
      const id = findWorkspace(db, name)!.id;
      const rows = (table: Table) =>
        db.prepare(`SELECT * FROM ${table} WHERE workspace_id = ? ORDER BY external_id`).all(id);
      const ws: Workspace = {
        name,
        id,
        token,
        wp: (path, body, headers) => wp(path, token, body, headers),
        rows,
        ids: (table = 'posts') => (rows(table) as { external_id: string }[]).map((r) => r.external_id),
        lastPostsSync: async () =>
          ((await ws.wp('handshake')).json() as { last_sync: { posts: string } }).last_sync.posts,
      };
      return ws;
    };
  })
  // A workspace per test, so that no test sees another's rows.
  .extend('ws', ({ newWorkspace }) => newWorkspace());

describe('POST /v1/wp/handshake', () => {
  test('names the workspace and what it holds, with the wp-plugin rate-limit headers', async ({ ws }) => {
    const handshake = (counts: object, last_sync: object) => ({
      workspace: { id: ws.id, name: ws.name },
      token_id: ws.token.split('|')[0],
      counts,
      last_sync,
      limits: { batch_size: 500, max_body_bytes: 5 * 1024 * 1024 },
    });
    const reply = await ws.wp('handshake');
    expectJson(
      reply,
      200,
      handshake({ posts: 0, products: 0, coupons: 0 }, { posts: null, products: null, coupons: null }),
    );
    expect(reply.headers['x-ratelimit-limit']).toBe('60');
    expect(reply.headers['x-ratelimit-remaining']).toBe('59');

    const synced = await ws.wp('posts/sync', { items: [post(1), post(2)] });
    expect(synced.status).toBe(200);
    expectJson(
      await ws.wp('handshake'),
      200,
      handshake({ posts: 2, products: 0, coupons: 0 }, { posts: ISO, products: null, coupons: null }),
    );
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

  test.for(paths)(
    '%s: 401 missing_token without a token, invalid_token with a bad one',
    async (path, { ws, wp }) => {
      const [id] = ws.token.split('|');
      const missing = await wp(path, undefined, { items: [] });
      expectJson(missing, 401, { error: { code: 'missing_token', message: 'API token missing.' } });
      expect(missing.headers['x-ratelimit-limit']).toBe('60');
      for (const bad of [`${id}|wrong-secret`, 'no-bar', 'unknown|secret']) {
        expectJson(await wp(path, bad, { items: [] }), 401, {
          error: { code: 'invalid_token', message: 'API token is invalid or has been revoked.' },
        });
      }
      expect(ws.rows('posts')).toEqual([]);
    },
  );

  test('an unknown /v1/wp path with a valid token is a JSON 404', async ({ ws }) => {
    expectJson(await ws.wp('pages/sync', { items: [] }), 404, NOT_FOUND);
  });
});

describe('POST /v1/wp/coupons/sync (the contract with the widget)', () => {
  const stored = (id: number, coupon: Record<string, unknown>) => {
    const { id: external, ...fields } = coupon;
    return { workspace_id: id, external_id: String(external), ...fields, synced_at: ISO };
  };

  test('stores the coupons as the widget reads them; a full sync without one removes it', async ({ ws }) => {
    const first = await ws.wp('coupons/sync', { items: [SAVE10], done: true });
    expectJson(first, 200, batchResult('coupons', { received: 1, created: 1, total: 1 }));
    expect(ws.rows('coupons')).toEqual([stored(ws.id, SAVE10)]);

    const fixed = {
      id: 7,
      code: 'minus5',
      discount_type: 'fixed',
      amount: 5.5,
      expires_at: '2030-01-01T12:00:00+02:00',
      usage_limit: 100,
      usage_count: 3,
    };
    const second = await ws.wp('coupons/sync', { items: [fixed] });
    expectJson(second, 200, batchResult('coupons', { received: 1, created: 1, deleted: 1, total: 1 }));
    expect(ws.rows('coupons')).toEqual([stored(ws.id, { ...fixed, expires_at: '2030-01-01T10:00:00.000Z' })]);
  });
});

describe('POST /v1/wp/posts/sync', () => {
  /** A post as stored: the fields the sync left out are null. */
  const storedPost = (workspace_id: number, fields: Record<string, unknown>) => ({
    workspace_id,
    content: null,
    excerpt: null,
    status: null,
    modified_at: null,
    ...fields,
    created_at: ISO,
    updated_at: ISO,
  });

  test('the same full sync twice changes nothing: not a value, not a timestamp', async ({ ws }) => {
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
    const first = await ws.wp('posts/sync', { sync_id: 'nightly', items });
    expectJson(first, 200, batchResult('posts', { sync_id: 'nightly', received: 3, created: 3, total: 3 }));
    const stored = ws.rows('posts');
    expect(stored).toEqual([
      storedPost(ws.id, {
        external_id: '1',
        title: 'Hello',
        url: 'https://shop.example/p/1',
        content: '<p>Hi</p>',
        excerpt: 'Hi',
        status: 'publish',
        modified_at: '2024-05-01T08:00:00.000Z',
      }),
      storedPost(ws.id, {
        external_id: '3',
        title: 'Third',
        url: 'https://shop.example/p/3',
        status: 'draft',
      }),
      storedPost(ws.id, { external_id: 'two', title: 'Second', url: 'https://shop.example/p/two' }),
    ]);

    const again = await ws.wp('posts/sync', { sync_id: 'nightly', items });
    expectJson(again, 200, batchResult('posts', { sync_id: 'nightly', received: 3, unchanged: 3, total: 3 }));
    expect(ws.rows('posts')).toEqual(stored);
  });

  test('a changed item is updated (only its updated_at moves); items missing from the sync are removed', async ({
    ws,
  }) => {
    await ws.wp('posts/sync', { items: [post(1), post(2), post(3)] });
    const before = ws.rows('posts') as Record<string, unknown>[];
    // So that a moved timestamp would differ from every stored one.
    await untilClockPast(Math.max(...before.map((row) => Date.parse(String(row['updated_at'])))));

    const reply = await ws.wp('posts/sync', { items: [post(1), post(2, 'Renamed')] });
    expectJson(
      reply,
      200,
      batchResult('posts', { received: 2, updated: 1, unchanged: 1, deleted: 1, total: 2 }),
    );
    const after = ws.rows('posts') as Record<string, unknown>[];
    expect(after[0]).toEqual(before[0]);
    expect(after[1]).toEqual({ ...before[1], title: 'Renamed', updated_at: ISO });
    expect(after[1]!['updated_at']).not.toBe(before[1]!['updated_at']);
    expect(after).toHaveLength(2);
  });

  test('an empty completed sync removes every post of the workspace, and only of that workspace', async ({
    ws: a,
    newWorkspace,
  }) => {
    const b = newWorkspace();
    await a.wp('posts/sync', { items: [post(1), post(2)] });
    await b.wp('posts/sync', { items: [post(1)] });
    expectJson(await a.wp('posts/sync', { items: [] }), 200, batchResult('posts', { deleted: 2 }));
    expect(a.rows('posts')).toEqual([]);
    expect(b.rows('posts')).toHaveLength(1);
  });

  test('a sync in several batches removes the missing items only when its last batch completes it', async ({
    ws,
  }) => {
    await ws.wp('posts/sync', { items: [post('old'), post('a', 'Old A')] });
    const syncedAt = await ws.lastPostsSync();

    const batch1 = await ws.wp('posts/sync', { sync_id: 'run-1', done: false, items: [post('a')] });
    expectJson(
      batch1,
      200,
      batchResult('posts', { sync_id: 'run-1', received: 1, updated: 1, done: false, total: 2 }),
    );
    expect(await ws.lastPostsSync()).toBe(syncedAt);

    const batch2 = await ws.wp('posts/sync', { sync_id: 'run-1', done: true, items: [post('b')] });
    expectJson(
      batch2,
      200,
      batchResult('posts', { sync_id: 'run-1', received: 1, created: 1, deleted: 1, total: 2 }),
    );
    expect(ws.ids()).toEqual(['a', 'b']);
    expect((await ws.lastPostsSync()) > syncedAt).toBe(true);
  });

  test('a retried final batch (after a timeout, say) deletes nothing more: the catalogue stays whole', async ({
    ws,
  }) => {
    await ws.wp('posts/sync', { items: [post('old')] });
    await ws.wp('posts/sync', { sync_id: 'S', done: false, items: [post(1), post(2)] });
    const last = { sync_id: 'S', done: true, items: [post(3)] };
    const result = batchResult('posts', { sync_id: 'S', received: 1, created: 1, deleted: 1, total: 3 });
    const retried = { ...result, created: 0, unchanged: 1, deleted: 0 };
    expectJson(await ws.wp('posts/sync', last), 200, result);
    const completed = (await ws.wp('handshake')).json();

    expectJson(await ws.wp('posts/sync', last), 200, retried);
    // A late retry of an earlier batch of the completed sync neither reopens it nor removes anything.
    expectJson(await ws.wp('posts/sync', { sync_id: 'S', done: false, items: [post(1), post(2)] }), 200, {
      ...result,
      received: 2,
      created: 0,
      unchanged: 2,
      deleted: 0,
      done: false,
    });
    expectJson(await ws.wp('posts/sync', last), 200, retried);
    expect(ws.ids()).toEqual(['1', '2', '3']);
    // The sync completed once: its completion time does not move.
    expect((await ws.wp('handshake')).json()).toEqual(completed);
  });

  test('interleaved full syncs: the newer sync_id supersedes the open one, whose later batches get 409', async ({
    ws,
  }) => {
    const batch = (syncId: string, ids: number[], done: boolean) =>
      ws.wp('posts/sync', { sync_id: syncId, done, items: ids.map((id) => post(id)) });
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
    expect(ws.ids()).toEqual(['1', '2', '3', '4']);
    expectJson(
      await batch('B', [6], true),
      200,
      batchResult('posts', { sync_id: 'B', received: 1, created: 1, deleted: 2, total: 3 }),
    );
    // The newest full sync decides: exactly what B carried, A's items gone, and A stays refused.
    expect(ws.ids()).toEqual(['3', '4', '6']);
    expectJson(await batch('A', [1, 2], false), 409, refused);
    expect(ws.ids()).toEqual(['3', '4', '6']);
    // Another kind, and a fresh sync of the same kind, are not affected.
    expect((await ws.wp('products/sync', { sync_id: 'A', items: [] })).status).toBe(200);
    expect(((await batch('C', [7], true)).json() as { total: number }).total).toBe(1);
  });

  // The tables of 422 messages are in validation.unit.test.ts (the service alone); this is the one end to end.
  test("a 422 comes through the gateway in the service's shape, with the wp-plugin rate-limit headers", async ({
    ws,
  }) => {
    const reply = await ws.wp('posts/sync', {});
    expectJson(reply, 422, validationFailed({ items: ['The items field is required.'] }));
    expect(reply.headers['x-ratelimit-limit']).toBe('60');
    expect(reply.headers['x-ratelimit-remaining']).toBe('59');
    expect(ws.rows('posts')).toEqual([]);
  });

  test('a batch of exactly 500 items is accepted in one transaction', async ({ ws }) => {
    const items = Array.from({ length: 500 }, (_, i) => post(i));
    expectJson(
      await ws.wp('posts/sync', { items }),
      200,
      batchResult('posts', { received: 500, created: 500, total: 500 }),
    );
  });

  test('JSON only: a form body is 415, malformed JSON is 400, and nothing is written', async ({ ws }) => {
    expectJson(
      await ws.wp('posts/sync', 'items=1', { 'content-type': 'application/x-www-form-urlencoded' }),
      415,
      { error: { code: 'unsupported_media_type', message: 'Send the request body as application/json.' } },
    );
    expectJson(await ws.wp('posts/sync', '{"items": [', {}), 400, {
      error: { code: 'bad_request', message: 'The JSON body is malformed.' },
    });
    expect(ws.rows('posts')).toEqual([]);
  });
});

describe('POST /v1/wp/products/sync', () => {
  test('stores products with their defaults; resending them changes nothing', async ({ ws }) => {
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
    expectJson(
      await ws.wp('products/sync', { items }),
      200,
      batchResult('products', { received: 2, created: 2, total: 2 }),
    );
    const stored = ws.rows('products');
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
    expectJson(
      await ws.wp('products/sync', { items }),
      200,
      batchResult('products', { received: 2, unchanged: 2, total: 2 }),
    );
    expect(ws.rows('products')).toEqual(stored);
  });
});

describe('POST /v1/wp/{posts,products}/changed', () => {
  test('upserts and deletes items; unknown deleted ids are ignored', async ({ ws }) => {
    await ws.wp('posts/sync', { items: [post(1), post(2), post(3)] });
    const reply = await ws.wp('posts/changed', {
      upserted: [post(1), post(2, 'Edited'), post(4)],
      deleted: [3, 'never-synced'],
    });
    expectJson(reply, 200, { kind: 'posts', created: 1, updated: 1, unchanged: 1, deleted: 1, total: 3 });
    expect(
      (ws.rows('posts') as { external_id: string; title: string }[]).map((r) => [r.external_id, r.title]),
    ).toEqual([
      ['1', 'Post 1'],
      ['2', 'Edited'],
      ['4', 'Post 4'],
    ]);
    expectJson(await ws.wp('posts/changed', {}), 200, {
      kind: 'posts',
      created: 0,
      updated: 0,
      unchanged: 0,
      deleted: 0,
      total: 3,
    });
  });

  test('products: a price change is an update, a deletion removes the row', async ({ ws }) => {
    const mug = { id: 'mug', name: 'Mug', url: 'https://shop.example/mug', price: 10 };
    await ws.wp('products/sync', { items: [mug, { ...mug, id: 'cup', name: 'Cup' }] });
    expectJson(await ws.wp('products/changed', { upserted: [{ ...mug, price: 9 }], deleted: ['cup'] }), 200, {
      kind: 'products',
      created: 0,
      updated: 1,
      unchanged: 0,
      deleted: 1,
      total: 1,
    });
    expect(ws.rows('products')).toEqual([
      expect.objectContaining({ external_id: 'mug', price: 9, currency: 'USD' }),
    ]);
  });

  test('an item upserted during a multi-batch full sync survives the sync completing', async ({ ws }) => {
    await ws.wp('posts/sync', { sync_id: 'big', done: false, items: [post(1)] });
    await ws.wp('posts/changed', { upserted: [post('fresh')] });
    const done = await ws.wp('posts/sync', { sync_id: 'big', items: [post(2)] });
    expect((done.json() as { deleted: number; total: number }).total).toBe(3);
    expect(ws.ids()).toEqual(['1', '2', 'fresh']);
  });

  test('coupons have no incremental endpoint', async ({ ws }) => {
    expectJson(await ws.wp('coupons/changed', { upserted: [] }), 404, NOT_FOUND);
  });
});
