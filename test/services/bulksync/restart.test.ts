// Synced data and workspace tokens live in the SQLite file: a new gateway on the same DATA_DIR
// finds them all, and can finish a multi-batch sync the previous one started.
import { expect } from 'vitest';
import { createWorkspaceToken } from '../../../src/services/accounts/workspaces.js';
import { embeddedTest } from '../../helpers/fixtures.js';
import { send } from '../../helpers/gateway.js';
import { post } from './items.js';

const test = embeddedTest({ redis: true });

test('a restarted gateway serves the same catalogue with the same token', async ({ gateway, db, launch }) => {
  const { token } = createWorkspaceToken(db, 'durable');
  let current = gateway;
  const wp = (path: string, body?: object) =>
    send(`${current.url()}/v1/wp/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body && JSON.stringify(body),
    });

  expect((await wp('posts/sync', { items: [post('a'), post('b')] })).status).toBe(200);
  const mug = { id: 1, name: 'Mug', url: 'https://shop.example/mug', price: 9.5 };
  expect((await wp('products/sync', { items: [mug] })).status).toBe(200);
  const coupon = { id: 'c1', code: 'SAVE10', discount_type: 'percent', amount: 10 };
  expect((await wp('coupons/sync', { items: [coupon] })).status).toBe(200);
  // A multi-batch sync of posts, started before the restart.
  expect((await wp('posts/sync', { sync_id: 'across', done: false, items: [post('c')] })).status).toBe(200);
  const before = (await wp('handshake')).json() as { counts: object; last_sync: object };
  expect(before.counts).toEqual({ posts: 3, products: 1, coupons: 1 });

  await gateway.close();
  current = await launch();

  const after = await wp('handshake');
  expect(after.status).toBe(200);
  expect(after.json()).toEqual(before);
  // The same products again: unchanged, so they were really there.
  expect(((await wp('products/sync', { items: [mug] })).json() as { unchanged: number }).unchanged).toBe(1);
  // The sync started before the restart completes: "a" and "b" were not in it.
  const done = await wp('posts/sync', { sync_id: 'across', items: [post('d')] });
  expect(done.json()).toEqual({
    sync_id: 'across',
    kind: 'posts',
    received: 1,
    created: 1,
    updated: 0,
    unchanged: 0,
    deleted: 2,
    done: true,
    total: 2,
  });
});
