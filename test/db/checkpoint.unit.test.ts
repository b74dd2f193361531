import Database from 'better-sqlite3';
import { afterEach, expect, test } from 'vitest';
import { checkpointIfLarge, walSize } from '../../src/db/checkpoint.js';
import { openDatabase, type Db } from '../../src/db/database.js';
import { newDataDir } from '../helpers/embedded.js';

const open: { close(): unknown }[] = [];
afterEach(() => {
  while (open.length) open.pop()!.close();
});

/** A table and a statement that inserts a row and returns it, as the services' are. */
function withTable(db: Db) {
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  return db.prepare<[string], { id: number }>('INSERT INTO t (body) VALUES (?) RETURNING id');
}

test('a write that returns a row, read with get(), still lets the auto-checkpoint run', () => {
  const db = openDatabase(newDataDir());
  open.push(db);
  const insert = withTable(db);
  for (let i = 1; i <= 5000; i++) expect(insert.get('x'.repeat(500))).toEqual({ id: i });
  // 5,000 commits of ~2 pages: about 40 MB of log if it were never checkpointed.
  expect(walSize(db)).toBeLessThanOrEqual(4 * 1024 * 1024 + 64 * 1024);
});

test('a log held past its size by a reader is truncated once the reader is gone', () => {
  const dir = newDataDir();
  const db = openDatabase(dir);
  open.push(db);
  const insert = withTable(db);
  // Another connection in a read transaction: no checkpoint may pass its snapshot, so the log grows.
  const reader = new Database(db.name);
  open.push(reader);
  reader.exec('BEGIN');
  reader.prepare('SELECT count(*) FROM t').get();
  for (let i = 0; i < 3000; i++) insert.get('x'.repeat(500));
  const grown = walSize(db);
  expect(grown).toBeGreaterThan(8 * 1024 * 1024);
  expect(checkpointIfLarge(db, 8 * 1024 * 1024)).toBe(false); // busy: the reader still holds it
  reader.exec('COMMIT');
  expect(checkpointIfLarge(db, 64 * 1024 * 1024)).toBe(false); // under the size: nothing to do
  expect(walSize(db)).toBe(grown);
  expect(checkpointIfLarge(db, 8 * 1024 * 1024)).toBe(true);
  expect(walSize(db)).toBe(0);
  expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 3000 });
});
