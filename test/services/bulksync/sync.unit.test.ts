// Full syncs over several batches, on a SQLite file of their own: retries, superseding, forgetting.
import { afterEach, test as base, describe, expect, vi } from 'vitest';
import { openDatabase, type Db } from '../../../src/db/database.js';
import { parseChanged, parseFullSync } from '../../../src/services/bulksync/batch.js';
import { KIND_SPECS } from '../../../src/services/bulksync/kinds.js';
import { CatalogueStore, RUN_KEPT_MS } from '../../../src/services/bulksync/store.js';
import { CatalogueSync } from '../../../src/services/bulksync/sync.js';
import { HttpError } from '../../../src/services/kit/errors.js';
import { ensureWorkspace } from '../../../src/services/accounts/workspaces.js';
import { newDataDir } from '../../helpers/embedded.js';

const { posts, products } = KIND_SPECS;
const post = (id: number) => ({ id, title: `Post ${id}`, url: `https://shop.example/${id}` });
const product = (id: number) => ({ id, name: `Product ${id}`, url: `https://shop.example/p${id}`, price: 1 });

/** The sync over a SQLite file of the file's own, and the helpers of one new workspace in it. */
interface Shop {
  readonly sync: CatalogueSync;
  /** A workspace of its own, so that no test sees another's rows. */
  newWorkspace(): number;
  /** One batch of a full sync of posts: `sync_id` and `done` as the client sends them. */
  batch(ws: number, syncId: string, ids: number[], done: boolean): ReturnType<CatalogueSync['fullSync']>;
  ids(ws: number, table?: string): unknown[];
  runs(ws: number): unknown[];
  seen(ws: number): number;
}

const test = base
  .extend('db', { scope: 'file' }, ({}, { onCleanup }): Db => {
    const db = openDatabase(newDataDir());
    onCleanup(() => {
      db.close();
    });
    return db;
  })
  .extend('shop', { scope: 'file' }, ({ db }): Shop => {
    const sync = new CatalogueSync(new CatalogueStore(db));
    let workspaces = 0;
    return {
      sync,
      newWorkspace: () => ensureWorkspace(db, `unit-${++workspaces}`).id,
      batch: (ws, syncId, ids, done) =>
        sync.fullSync(posts, ws, parseFullSync(posts, { sync_id: syncId, done, items: ids.map(post) })),
      ids: (ws, table = 'posts') =>
        db
          .prepare(`SELECT external_id FROM ${table} WHERE workspace_id = ? ORDER BY external_id`)
          .pluck()
          .all(ws),
      runs: (ws) =>
        db
          .prepare('SELECT kind, sync_id, state FROM sync_runs WHERE workspace_id = ? ORDER BY kind, sync_id')
          .all(ws),
      seen: (ws) =>
        db.prepare('SELECT count(*) FROM sync_seen WHERE workspace_id = ?').pluck().get(ws) as number,
    };
  });

afterEach(() => {
  vi.useRealTimers();
});

/** The error a call throws. */
function thrown(fn: () => unknown): HttpError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HttpError);
    return err as HttpError;
  }
  throw new Error('expected an HttpError');
}

describe('a retried batch of a completed sync', () => {
  test('upserts its items but deletes nothing more (the review probe: deleted 2, total 1 before the fix)', ({
    shop: { newWorkspace, batch, ids, runs, seen },
  }) => {
    const ws = newWorkspace();
    batch(ws, 'S', [1, 2], false);
    expect(batch(ws, 'S', [3], true)).toMatchObject({ deleted: 0, total: 3, done: true });
    expect(batch(ws, 'S', [3], true)).toMatchObject({ created: 0, unchanged: 1, deleted: 0, total: 3 });
    expect(ids(ws)).toEqual(['1', '2', '3']);
    expect(runs(ws)).toEqual([{ kind: 'posts', sync_id: 'S', state: 'completed' }]);
    // A completed sync keeps no ids: only open ones need them.
    expect(seen(ws)).toBe(0);
  });

  test('a changed item in the retry is written: the retry carries what the site holds now', ({
    shop: { sync, newWorkspace, batch },
  }) => {
    const ws = newWorkspace();
    batch(ws, 'S', [1], true);
    const renamed = { ...post(1), title: 'Renamed' };
    expect(
      sync.fullSync(posts, ws, parseFullSync(posts, { sync_id: 'S', items: [renamed, post(2)] })),
    ).toMatchObject({ created: 1, updated: 1, deleted: 0, total: 2 });
  });

  test('is forgotten 24 h after it completed: the same sync_id is then a new sync', ({
    shop: { newWorkspace, batch, ids },
  }) => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const start = new Date('2030-01-01T00:00:00Z').getTime();
    vi.setSystemTime(start);
    const ws = newWorkspace();
    batch(ws, 'nightly', [1, 2], true);
    vi.setSystemTime(start + RUN_KEPT_MS - 1);
    expect(batch(ws, 'nightly', [1], true)).toMatchObject({ deleted: 0, total: 2 });
    vi.setSystemTime(start + RUN_KEPT_MS + 1);
    expect(batch(ws, 'nightly', [1], true)).toMatchObject({ deleted: 1, total: 1 });
    expect(ids(ws)).toEqual(['1']);
  });
});

describe('one open full sync per workspace and kind', () => {
  test('interleaved A1 B1 A2 B2: B supersedes A, A2 is refused and writes nothing, B decides (was {6} only)', ({
    shop: { newWorkspace, batch, ids, runs, seen },
  }) => {
    const ws = newWorkspace();
    batch(ws, 'A', [1, 2], false);
    batch(ws, 'B', [3, 4], false);
    const refused = thrown(() => batch(ws, 'A', [5], true));
    expect({ status: refused.status, code: refused.code }).toEqual({ status: 409, code: 'sync_superseded' });
    expect(ids(ws)).toEqual(['1', '2', '3', '4']);
    expect(batch(ws, 'B', [6], true)).toMatchObject({ deleted: 2, total: 3 });
    expect(ids(ws)).toEqual(['3', '4', '6']);
    expect(runs(ws)).toEqual([
      { kind: 'posts', sync_id: 'A', state: 'superseded' },
      { kind: 'posts', sync_id: 'B', state: 'completed' },
    ]);
    expect(seen(ws)).toBe(0);
  });

  test('a one-batch sync (no sync_id) supersedes the open one too', ({
    shop: { sync, newWorkspace, batch, ids },
  }) => {
    const ws = newWorkspace();
    batch(ws, 'A', [1, 2], false);
    sync.fullSync(posts, ws, parseFullSync(posts, { items: [post(9)] }));
    expect(ids(ws)).toEqual(['9']);
    expect(thrown(() => batch(ws, 'A', [3], true)).code).toBe('sync_superseded');
    expect(ids(ws)).toEqual(['9']);
  });

  test('kinds and workspaces are independent', ({ shop: { sync, newWorkspace, batch } }) => {
    const ws = newWorkspace();
    const other = newWorkspace();
    batch(ws, 'A', [1], false);
    sync.fullSync(products, ws, parseFullSync(products, { sync_id: 'B', done: false, items: [product(1)] }));
    batch(other, 'B', [1], false);
    expect(batch(ws, 'A', [2], true)).toMatchObject({ deleted: 0, total: 2 });
    expect(
      sync.fullSync(products, ws, parseFullSync(products, { sync_id: 'B', items: [product(2)] })),
    ).toMatchObject({ total: 2 });
    expect(batch(other, 'B', [2], true)).toMatchObject({ total: 2 });
  });

  test('an incremental upsert during an open sync survives it, not a superseded one', ({
    shop: { sync, newWorkspace, batch, ids },
  }) => {
    const ws = newWorkspace();
    batch(ws, 'A', [1], false);
    sync.changed(posts, ws, parseChanged(posts, { upserted: [post(50)] }));
    batch(ws, 'B', [2], false);
    sync.changed(posts, ws, parseChanged(posts, { upserted: [post(60)] }));
    batch(ws, 'B', [3], true);
    expect(ids(ws)).toEqual(['2', '3', '60']);
  });

  test('an unfinished sync with no batch for 24 h is forgotten; one still sending batches is not', ({
    shop: { newWorkspace, batch },
  }) => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const start = new Date('2031-01-01T00:00:00Z').getTime();
    vi.setSystemTime(start);
    const ws = newWorkspace();
    batch(ws, 'slow', [1], false);
    vi.setSystemTime(start + RUN_KEPT_MS - 1);
    batch(ws, 'slow', [2], false);
    vi.setSystemTime(start + RUN_KEPT_MS + 1);
    expect(batch(ws, 'slow', [3], true)).toMatchObject({ deleted: 0, total: 3 });

    batch(ws, 'stalled', [1], false);
    vi.setSystemTime(start + 3 * RUN_KEPT_MS);
    // "stalled" is forgotten: its id is a new sync that carried only this batch.
    expect(batch(ws, 'stalled', [4], true)).toMatchObject({ deleted: 3, total: 1 });
  });
});
