import { statSync } from 'node:fs';
import type { Db } from './database.js';

/** The size of the database's write-ahead log in bytes (0: none). */
export function walSize(db: Db): number {
  try {
    return statSync(`${db.name}-wal`).size;
  } catch {
    return 0;
  }
}

/**
 * Checkpoints the log and truncates it to nothing once it has passed `maxBytes`. SQLite's own
 * auto-checkpoint is PASSIVE: a reader in another process can keep it from ever reaching the log's
 * end, and the file then only grows. Returns whether a checkpoint ran to the end (busy: not this time).
 */
export function checkpointIfLarge(db: Db, maxBytes: number): boolean {
  if (walSize(db) <= maxBytes) return false;
  const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
  return result?.busy === 0;
}
