// WooCommerce's and WordPress's own shapes, as their REST APIs send them, through the bulk-sync
// service's routes (buildService + inject, no socket): string prices and amounts, every coupon
// discount_type of WooCommerce's schema, and *_gmt dates without an offset (read as UTC).
import { test as base, describe, expect } from 'vitest';
import { servicesConfigFrom } from '../../../src/cli/services-config.js';
import { loadConfigText } from '../../../src/rules/load.js';
import { createWorkspaceToken, findWorkspace } from '../../../src/services/accounts/workspaces.js';
import { buildService, openServiceDatabase } from '../../../src/services/registry.js';
import { DEFAULT_CONFIG } from '../../helpers/default-config.js';
import { embeddedEnv, newDataDir } from '../../helpers/embedded.js';
import { silentLogger } from '../../helpers/gateway.js';

const test = base
  .extend('db', { scope: 'file' }, ({}, { onCleanup }) => {
    const config = servicesConfigFrom(
      loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', embeddedEnv(newDataDir())).config,
    );
    const db = openServiceDatabase(config, silentLogger);
    onCleanup(() => void db.close());
    return { db, config };
  })
  .extend('app', { scope: 'file' }, async ({ db }, { onCleanup }) => {
    const app = await buildService('bulksync', { db: db.db, config: db.config, logger: silentLogger });
    onCleanup(() => app.close());
    return app;
  });

let workspaces = 0;

describe('WooCommerce and WordPress shapes', () => {
  test('string prices, WooCommerce coupon types and amounts, dates without an offset', async ({
    db,
    app,
  }) => {
    const name = `woo-${++workspaces}`;
    const { token } = createWorkspaceToken(db.db, name);
    const workspaceId = findWorkspace(db.db, name)!.id;
    const sync = (kind: string, items: unknown[]) =>
      app.inject({
        method: 'POST',
        url: `/v1/wp/${kind}/sync`,
        headers: { authorization: `Bearer ${token}` },
        payload: { items, done: true },
      });

    const products = await sync('products', [
      { id: 11, name: 'Mug', url: 'https://shop.example/mug', price: '39.50', currency: 'eur' },
      { id: 12, name: 'Cap', url: 'https://shop.example/cap', price: '12' },
      { id: 13, name: 'Pin', url: 'https://shop.example/pin', price: 0.5 },
    ]);
    expect(products.statusCode, products.body).toBe(200);
    expect(
      db.db
        .prepare(
          'SELECT external_id, price, currency FROM products WHERE workspace_id = ? ORDER BY external_id',
        )
        .all(workspaceId),
    ).toEqual([
      { external_id: '11', price: 39.5, currency: 'EUR' },
      { external_id: '12', price: 12, currency: 'USD' },
      { external_id: '13', price: 0.5, currency: 'USD' },
    ]);

    const coupons = await sync('coupons', [
      {
        id: 1,
        code: 'CART5',
        discount_type: 'fixed_cart',
        amount: '5.00',
        expires_at: '2030-01-01T00:00:00',
      },
      {
        id: 2,
        code: 'ITEM2',
        discount_type: 'fixed_product',
        amount: '2.00',
        expires_at: '2030-01-01 12:30:00',
      },
      { id: 3, code: 'TENPC', discount_type: 'percent', amount: '10', expires_at: null, usage_limit: null },
      { id: 4, code: 'OLD', discount_type: 'fixed', amount: 1 },
    ]);
    expect(coupons.statusCode, coupons.body).toBe(200);
    expect(
      db.db
        .prepare(
          'SELECT external_id, discount_type, amount, expires_at FROM coupons WHERE workspace_id = ? ORDER BY external_id',
        )
        .all(workspaceId),
    ).toEqual([
      { external_id: '1', discount_type: 'fixed_cart', amount: 5, expires_at: '2030-01-01T00:00:00.000Z' },
      { external_id: '2', discount_type: 'fixed_product', amount: 2, expires_at: '2030-01-01T12:30:00.000Z' },
      { external_id: '3', discount_type: 'percent', amount: 10, expires_at: null },
      { external_id: '4', discount_type: 'fixed', amount: 1, expires_at: null },
    ]);

    const posts = await sync('posts', [
      { id: 7, title: 'Hello', url: 'https://shop.example/hello', modified_at: '2026-11-01T10:00:00' },
      { id: 8, title: 'World', url: 'https://shop.example/world', modified_at: '2026-11-01 10:00:00' },
      { id: 9, title: 'Again', url: 'https://shop.example/again', modified_at: '2026-11-01T12:00:00+02:00' },
    ]);
    expect(posts.statusCode, posts.body).toBe(200);
    expect(
      db.db
        .prepare('SELECT external_id, modified_at FROM posts WHERE workspace_id = ? ORDER BY external_id')
        .all(workspaceId),
    ).toEqual([
      { external_id: '7', modified_at: '2026-11-01T10:00:00.000Z' },
      { external_id: '8', modified_at: '2026-11-01T10:00:00.000Z' },
      { external_id: '9', modified_at: '2026-11-01T10:00:00.000Z' },
    ]);
  });

  test('each bad item is still named in a 422, and nothing of the batch is stored', async ({ db, app }) => {
    const name = `woo-${++workspaces}`;
    const { token } = createWorkspaceToken(db.db, name);
    const post = (kind: string, items: unknown[]) =>
      app.inject({
        method: 'POST',
        url: `/v1/wp/${kind}/sync`,
        headers: { authorization: `Bearer ${token}` },
        payload: { items },
      });
    const products = await post('products', [
      { id: 1, name: 'A', url: 'https://shop.example/a', price: '39.50' },
      { id: 2, name: 'B', url: 'https://shop.example/b', price: '' },
      { id: 3, name: 'C', url: 'https://shop.example/c', price: '39,50' },
      { id: 4, name: 'D', url: 'https://shop.example/d', price: '-1' },
      { id: 5, name: 'E', url: 'https://shop.example/e', price: '1e3' },
    ]);
    expect({ status: products.statusCode, body: products.json() }).toEqual({
      status: 422,
      body: {
        error: {
          code: 'validation_failed',
          message: 'The given data was invalid.',
          fields: {
            'items.1.price': ['The price field is required.'],
            'items.2.price': ['The price field must be a number.'],
            'items.3.price': ['The price field must be at least 0.'],
            'items.4.price': ['The price field must be a number.'],
          },
        },
      },
    });
    const coupons = await post('coupons', [
      { id: 1, code: 'A', discount_type: 'percent_product', amount: '1' },
      { id: 2, code: 'B', discount_type: 'percent', amount: '150.00' },
      { id: 3, code: 'C', discount_type: 'fixed_cart', amount: '5', expires_at: '2026-02-30 10:00:00' },
      { id: 4, code: 'D', discount_type: 'fixed_cart', amount: '5', expires_at: '2026-11-01' },
    ]);
    expect({ status: coupons.statusCode, body: coupons.json() }).toEqual({
      status: 422,
      body: {
        error: {
          code: 'validation_failed',
          message: 'The given data was invalid.',
          fields: {
            'items.0.discount_type': ['The selected discount_type is invalid.'],
            'items.1.amount': ['The amount field must not be greater than 100 for a percent coupon.'],
            'items.2.expires_at': ['The expires_at field must be an ISO-8601 date-time.'],
            'items.3.expires_at': ['The expires_at field must be an ISO-8601 date-time.'],
          },
        },
      },
    });
    const workspaceId = findWorkspace(db.db, name)!.id;
    expect(
      db.db.prepare('SELECT count(*) AS n FROM products WHERE workspace_id = ?').get(workspaceId),
    ).toEqual({ n: 0 });
    expect(
      db.db.prepare('SELECT count(*) AS n FROM coupons WHERE workspace_id = ?').get(workspaceId),
    ).toEqual({ n: 0 });
  });
});
