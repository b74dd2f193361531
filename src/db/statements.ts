import type { Statement } from 'better-sqlite3';
import type { Db } from './database.js';

const cache = new WeakMap<Db, Map<string, Statement>>();

/** The prepared statement for `sql` on `db`, prepared on first use and reused after (no per-request parse). */
export function prepared(db: Db, sql: string): Statement {
  let statements = cache.get(db);
  if (!statements) cache.set(db, (statements = new Map()));
  let statement = statements.get(sql);
  if (!statement) statements.set(sql, (statement = db.prepare(sql)));
  return statement;
}
