// The bulk-sync service's field validation (/v1/wp/*, 422 validation_failed), through its routes
// with buildService + inject on a temporary SQLite file: no gateway, no Redis, no socket. The
// gateway's side (tokens, rate-limit headers, one 422 end to end) is in endpoints.test.ts.
import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect } from 'vitest';
import { createWorkspaceToken, findWorkspace } from '../../../src/services/accounts/workspaces.js';
import { buildService } from '../../../src/services/registry.js';
import { servicesTest } from '../../helpers/fixtures.js';
import { expectJson, post, SAVE10, validationFailed } from './items.js';

interface Workspace {
  readonly id: number;
  /** POSTs `body` (JSON) to /v1/wp/<path> with the workspace's token. */
  wp(path: string, body?: unknown): Promise<LightMyRequestResponse>;
  /** Every row of the workspace in `table`. */
  rows(table: 'posts' | 'products' | 'coupons'): unknown[];
}

const test = servicesTest
  .extend('app', { scope: 'file' }, async ({ services }, { onCleanup }) => {
    const app = await buildService('bulksync', services);
    onCleanup(() => app.close());
    return app;
  })
  // A new workspace per test, with its own token, so that no test sees another's rows.
  .extend('ws', ({ services: { db }, app }): Workspace => {
    const name = `shop-${randomBytes(6).toString('hex')}`;
    const { token } = createWorkspaceToken(db, name);
    const id = findWorkspace(db, name)!.id;
    return {
      id,
      wp: (path, body) =>
        app.inject({
          method: 'POST',
          url: `/v1/wp/${path}`,
          headers: {
            authorization: `Bearer ${token}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
        }),
      rows: (table) =>
        db.prepare(`SELECT * FROM ${table} WHERE workspace_id = ? ORDER BY external_id`).all(id),
    };
  });

describe('POST /v1/wp/coupons/sync', () => {
  test('each bad coupon is reported by index, and a code repeated in a batch (any case) is refused', async ({
    ws,
  }) => {
    const reply = await ws.wp('coupons/sync', {
      items: [
        SAVE10,
        { ...SAVE10, id: 'c2', code: 'save10' },
        { id: 'c3', code: '', discount_type: 'half', amount: -1, usage_limit: 1.5, usage_count: -2 },
        { ...SAVE10, id: 'c4', code: 'BIG', amount: 150 },
        { ...SAVE10, id: 'c5', code: 'LATE', expires_at: 'next week' },
      ],
    });
    expectJson(
      reply,
      422,
      validationFailed({
        'items.1.code': ['The code was already given at items.0.'],
        'items.2.code': ['The code field is required.'],
        'items.2.discount_type': ['The selected discount_type is invalid.'],
        'items.2.amount': ['The amount field must be at least 0.'],
        'items.2.usage_limit': ['The usage_limit field must be an integer.'],
        'items.2.usage_count': ['The usage_count field must be at least 0.'],
        'items.3.amount': ['The amount field must not be greater than 100 for a percent coupon.'],
        'items.4.expires_at': ['The expires_at field must be an ISO-8601 date-time.'],
      }),
    );
    expect(ws.rows('coupons')).toEqual([]);
  });
});

describe('POST /v1/wp/posts/sync', () => {
  test('a failed sync changes nothing and reports every bad item by index', async ({ ws }) => {
    expect((await ws.wp('posts/sync', { items: [post(1), post(2)] })).statusCode).toBe(200);
    const handshake = (await ws.wp('handshake')).json();
    const before = ws.rows('posts');

    const reply = await ws.wp('posts/sync', {
      items: [
        post(1, 'Changed'),
        post(3, '', { url: 'ftp://shop.example/3' }),
        'not an object',
        {
          title: 'x'.repeat(501),
          url: 'https://shop.example/x',
          status: 'archived',
          modified_at: 'yesterday',
        },
        post('1', 'Same id as items.0'),
        post(5, 'Bad content', { content: 42, excerpt: ['x'] }),
      ],
    });
    expectJson(
      reply,
      422,
      validationFailed({
        'items.1.title': ['The title field is required.'],
        'items.1.url': ['The url field must be a valid http or https URL.'],
        'items.2': ['The item must be an object.'],
        'items.3.id': ['The id field is required.'],
        'items.3.title': ['The title field must not be greater than 500 characters.'],
        'items.3.status': ['The selected status is invalid.'],
        'items.3.modified_at': ['The modified_at field must be an ISO-8601 date-time.'],
        'items.4.id': ['The id "1" was already given at items.0.'],
        'items.5.content': ['The content field must be a string.'],
        'items.5.excerpt': ['The excerpt field must be a string.'],
      }),
    );
    expect(ws.rows('posts')).toEqual(before);
    expect((await ws.wp('handshake')).json()).toEqual(handshake);
  });

  // The envelope: items required and at most 500, sync_id required when done is false.
  test.for<[string, unknown, Record<string, string[]>]>([
    ['an empty object', {}, { items: ['The items field is required.'] }],
    ['no body', undefined, { items: ['The items field is required.'] }],
    [
      '501 items',
      { items: Array.from({ length: 501 }, (_, i) => post(i)) },
      { items: ['The items field must not have more than 500 items.'] },
    ],
    [
      'wrong types and a long sync_id',
      { items: 'all', done: 'yes', sync_id: 'x'.repeat(101) },
      {
        sync_id: ['The sync_id field must not be greater than 100 characters.'],
        items: ['The items field must be an array.'],
        done: ['The done field must be true or false.'],
      },
    ],
    [
      'done false without a sync_id',
      { done: false, items: [post(1), { id: 2 }] },
      {
        sync_id: ['The sync_id field is required when done is false.'],
        'items.1.title': ['The title field is required.'],
        'items.1.url': ['The url field is required.'],
      },
    ],
  ])('the envelope, %s: 422 and nothing written', async ([, body, fields], { ws }) => {
    expectJson(await ws.wp('posts/sync', body), 422, validationFailed(fields));
    expect(ws.rows('posts')).toEqual([]);
  });
});

describe('POST /v1/wp/products/sync', () => {
  test('each bad product is reported by index', async ({ ws }) => {
    const reply = await ws.wp('products/sync', {
      items: [
        { id: 1, name: 'Ok', url: 'https://shop.example/1', price: 1 },
        { id: 2, name: 'Cheap', url: 'https://shop.example/2', price: -0.01, currency: 'EURO' },
        { id: 3, name: 'Free', url: 'not a url', price: 'three', stock_status: 'gone' },
        { id: 1.5, name: 'Half', url: 'https://shop.example/h' },
      ],
    });
    expectJson(
      reply,
      422,
      validationFailed({
        'items.1.price': ['The price field must be at least 0.'],
        'items.1.currency': ['The currency field must be 3 letters.'],
        'items.2.url': ['The url field must be a valid http or https URL.'],
        'items.2.price': ['The price field must be a number.'],
        'items.2.stock_status': ['The selected stock_status is invalid.'],
        'items.3.id': ['The id field must be a non-empty string (at most 191 characters) or an integer.'],
        'items.3.price': ['The price field is required.'],
      }),
    );
    expect(ws.rows('products')).toEqual([]);
  });
});

describe('POST /v1/wp/{posts,products}/changed', () => {
  test('invalid changes are all reported and nothing is applied', async ({ ws }) => {
    expect((await ws.wp('posts/sync', { items: [post(1)] })).statusCode).toBe(200);
    const before = ws.rows('posts');
    const reply = await ws.wp('posts/changed', {
      upserted: [post(2), post(3, '', {}), post(2, 'again')],
      deleted: [1, '', 2, { id: 4 }],
    });
    expectJson(
      reply,
      422,
      validationFailed({
        'upserted.1.title': ['The title field is required.'],
        'upserted.2.id': ['The id "2" was already given at upserted.0.'],
        'deleted.1': ['The id field is required.'],
        'deleted.2': ['The id "2" is also in upserted.'],
        'deleted.3': ['The id field must be a non-empty string (at most 191 characters) or an integer.'],
      }),
    );
    expectJson(
      await ws.wp('products/changed', {
        upserted: {},
        deleted: Array.from({ length: 501 }, (_, i) => i),
      }),
      422,
      validationFailed({
        upserted: ['The upserted field must be an array.'],
        deleted: ['The deleted field must not have more than 500 items.'],
      }),
    );
    expect(ws.rows('posts')).toEqual(before);
    expect(ws.rows('products')).toEqual([]);
  });
});
