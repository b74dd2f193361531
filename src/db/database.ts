import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, type Migration } from './migrations/index.js';
import { DatabaseOpenError } from './open-error.js';

export type Db = Database.Database;

export const DATABASE_FILE = 'tollgate.db';

/**
 * Opens (creating if needed) the embedded services' SQLite database under `dataDir` and brings its
 * schema up to date. WAL lets readers run beside the one writer, and keeps every committed
 * transaction across a crash; several processes (gateway workers, `tollgate serve`) may open it.
 */
export function openDatabase(dataDir: string): Db {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, DATABASE_FILE);
  let db: Db | undefined;
  try {
    db = finishingWrites(new Database(file));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    // After a checkpoint the log is cut back to this size rather than kept at its largest.
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
    migrate(db, MIGRATIONS);
    return db;
  } catch (err) {
    db?.close();
    // A file that is not a database, unreadable, or of a newer schema: the one line `start` prints.
    throw new DatabaseOpenError(file, (err as Error).message);
  }
}

/** The size the write-ahead log is truncated to after a checkpoint (SQLite's auto-checkpoint is ~4 MB). */
export const WAL_SIZE_LIMIT = 4 * 1024 * 1024;

/**
 * Makes `get()` of a statement that writes and returns rows (`INSERT … RETURNING`) step it to its
 * end. better-sqlite3's `get()` resets it after the first row, and SQLite runs its WAL hook (the
 * auto-checkpoint) only when a statement completes: one such insert per request and the log grows
 * without bound (20,000 inserts: 91 MB of log instead of 4 MB). Done here, for every statement of
 * the services, so no caller can leave the class open.
 */
function finishingWrites(db: Db): Db {
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    const statement = prepare(sql);
    if (statement.reader && !statement.readonly) {
      statement.get = ((...params: unknown[]) => statement.all(...params)[0]) as typeof statement.get;
    }
    return statement;
  }) as typeof db.prepare;
  return db;
}

/** Applies, in one immediate transaction each, the migrations newer than the file's user_version. */
export function migrate(db: Db, migrations: readonly Migration[]): void {
  const apply = db.transaction((m: Migration) => {
    // Re-read inside the write lock: another process may have applied it meanwhile.
    if ((db.pragma('user_version', { simple: true }) as number) >= m.version) return;
    db.exec(m.sql);
    db.pragma(`user_version = ${m.version}`);
  });
  for (const m of migrations) {
    if ((db.pragma('user_version', { simple: true }) as number) < m.version) apply.immediate(m);
  }
}
