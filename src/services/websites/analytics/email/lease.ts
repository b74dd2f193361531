import type { Db } from '../../../../db/database.js';
import { prepared } from '../../../../db/statements.js';

/**
 * The `leases` table's repository: the only file with SQL on it. A lease row: the one process
 * (of several gateway instances or workers on one database) that holds `name` until
 * `expires_ms`. Taken when free or expired, renewed by its holder; one statement, so two
 * processes never both get it.
 */
export function acquireLease(db: Db, name: string, holder: string, nowMs: number, ttlMs: number): boolean {
  const taken = prepared<[Record<string, unknown>]>(
    db,
    `INSERT INTO leases (name, holder, expires_ms) VALUES (@name, @holder, @until)
     ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_ms = excluded.expires_ms
     WHERE leases.holder = excluded.holder OR leases.expires_ms <= @now`,
  ).run({ name, holder, until: nowMs + ttlMs, now: nowMs });
  return taken.changes === 1;
}

/** Gives the lease up (at shutdown), so another process need not wait for it to expire. */
export function releaseLease(db: Db, name: string, holder: string): void {
  prepared<[string, string]>(db, 'DELETE FROM leases WHERE name = ? AND holder = ?').run(name, holder);
}
