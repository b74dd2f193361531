// A WooCommerce shop's own values, sent through the real gateway: its string prices and its default
// coupon type (fixed_cart, with an expiry in date_expires_gmt's form), then the widget applying
// that coupon for a visitor of the same workspace.
import { test as base, expect } from 'vitest';
import { openDatabase } from '../../../src/db/database.js';
import { createWorkspaceToken } from '../../../src/services/accounts/workspaces.js';
import { newDataDir, startEmbeddedGateway } from '../../helpers/embedded.js';
import { send } from '../../helpers/gateway.js';
import { RedisServer } from '../../helpers/redis-server.js';

const test = base
  .extend('redis', { scope: 'file' }, async ({}, { onCleanup }) => {
    const redis = await RedisServer.start();
    onCleanup(() => redis.kill());
    return redis;
  })
  .extend('dataDir', { scope: 'file' }, () => newDataDir())
  .extend('gateway', { scope: 'file' }, async ({ redis, dataDir }, { onCleanup }) => {
    const gateway = await startEmbeddedGateway(dataDir, { REDIS_URL: redis.url });
    onCleanup(() => gateway.close());
    return gateway;
  });

test(
  'string prices and a fixed_cart coupon sync through the gateway; the widget applies the coupon',
  { timeout: 60_000 },
  async ({ gateway, dataDir }) => {
    const db = openDatabase(dataDir);
    const { token } = createWorkspaceToken(db, 'woo');
    db.close();
    const wp = (path: string, body: unknown) =>
      send(`${gateway.url()}/api/v1/wp/${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    const products = await wp('products/sync', {
      items: [{ id: 41, name: 'Mug', url: 'https://shop.example/mug', price: '39.50', currency: 'EUR' }],
      done: true,
    });
    expect(products.status, products.text).toBe(200);
    expect(products.json()).toMatchObject({ kind: 'products', received: 1, created: 1, total: 1 });

    const coupons = await wp('coupons/sync', {
      items: [
        {
          id: 9,
          code: 'WELCOME5',
          discount_type: 'fixed_cart',
          amount: '5.00',
          expires_at: '2999-01-01 00:00:00',
        },
      ],
      done: true,
    });
    expect(coupons.status, coupons.text).toBe(200);
    expect(coupons.json()).toMatchObject({ kind: 'coupons', received: 1, created: 1, total: 1 });

    const init = await send(`${gateway.url()}/api/v1/widget/init`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workspace: 'woo' }),
    });
    expect(init.status, init.text).toBe(200);
    const visitor = (init.json() as { token: string }).token;
    const applied = await send(`${gateway.url()}/api/v1/widget/coupon/apply`, {
      method: 'POST',
      headers: { authorization: `Bearer ${visitor}`, 'content-type': 'application/json' },
      body: JSON.stringify({ code: 'welcome5' }),
    });
    expect({ status: applied.status, body: applied.json() }).toEqual({
      status: 200,
      body: {
        coupon: {
          code: 'WELCOME5',
          discount_type: 'fixed_cart',
          amount: 5,
          expires_at: '2999-01-01T00:00:00.000Z',
        },
      },
    });
  },
);
