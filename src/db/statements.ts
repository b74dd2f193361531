import type { Statement } from 'better-sqlite3';
import type { Db } from './database.js';

const cache = new WeakMap<Db, Map<string, Statement<unknown[]>>>();

/**
 * The prepared statement for `sql` on `db`, prepared on first use and reused after (no per-request
 * parse). Typed as `db.prepare<Params, Row>` is: the parameters it binds and the row it reads.
 */
export function prepared<Params extends unknown[] = unknown[], Row = unknown>(
  db: Db,
  sql: string,
): Statement<Params, Row> {
  let statements = cache.get(db);
  if (!statements) cache.set(db, (statements = new Map()));
  let statement = statements.get(sql);
  if (!statement) statements.set(sql, (statement = db.prepare(sql)));
  // One SQL text is one statement: its types are those of the first caller's, which are the same.
  return statement as Statement<Params, Row>;
}
