import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, type Migration } from './migrations/index.js';

export type Db = Database.Database;

export const DATABASE_FILE = 'tollgate.db';

/**
 * Opens (creating if needed) the embedded services' SQLite database under `dataDir` and brings its
 * schema up to date. WAL lets readers run beside the one writer, and keeps every committed
 * transaction across a crash; several processes (gateway workers, `tollgate serve`) may open it.
 */
export function openDatabase(dataDir: string): Db {
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(join(dataDir, DATABASE_FILE));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db, MIGRATIONS);
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
