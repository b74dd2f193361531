import type { Db } from '../../db/database.js';
import { prepared } from '../../db/statements.js';
import type { DiscountType, SqlValue } from './items.js';
import { KIND_SPECS, KINDS, sameValues, type Item, type Kind, type KindSpec } from './kinds.js';

/** The synced catalogue in SQLite: the only file with SQL on its tables; statements through prepared(). */

export type Outcome = 'created' | 'updated' | 'unchanged';

/** The statements of one kind's table. */
function kindStatements(db: Db, spec: KindSpec) {
  const { table, columns, createdStamp, changedStamp } = spec;
  const stamps = createdStamp ? [createdStamp, changedStamp] : [changedStamp];
  const insertColumns = ['workspace_id', 'external_id', ...columns, ...stamps];
  const insertValues = [
    '@workspace_id',
    '@external_id',
    ...columns.map((c) => `@${c}`),
    ...stamps.map(() => '@now'),
  ];
  const sets = [...columns.map((c) => `${c} = @${c}`), `${changedStamp} = @now`];
  const key = 'workspace_id = ? AND external_id = ?';
  return {
    select: prepared<[number, string], Record<string, SqlValue>>(
      db,
      `SELECT ${columns.join(', ')} FROM ${table} WHERE ${key}`,
    ),
    insert: prepared<[Record<string, SqlValue>]>(
      db,
      `INSERT INTO ${table} (${insertColumns.join(', ')}) VALUES (${insertValues.join(', ')})`,
    ),
    update: prepared<[Record<string, SqlValue>]>(
      db,
      `UPDATE ${table} SET ${sets.join(', ')} WHERE workspace_id = @workspace_id AND external_id = @external_id`,
    ),
    remove: prepared<[number, string]>(db, `DELETE FROM ${table} WHERE ${key}`),
    removeUnseen: prepared<[number, number, string, string]>(
      db,
      `DELETE FROM ${table} WHERE workspace_id = ? AND external_id NOT IN
         (SELECT external_id FROM sync_seen WHERE workspace_id = ? AND kind = ? AND sync_id = ?)`,
    ),
    count: prepared<[number], { n: number }>(db, `SELECT count(*) AS n FROM ${table} WHERE workspace_id = ?`),
  };
}

type KindStatements = ReturnType<typeof kindStatements>;

/**
 * How long a full sync is remembered after its last batch: an unfinished one until a later sync of
 * its kind forgets it, a completed or superseded one to recognise a retried batch.
 */
export const RUN_KEPT_MS = 24 * 60 * 60 * 1000;

/** Where a full sync stands. */
export type RunState = 'open' | 'completed' | 'superseded';

export class CatalogueStore {
  readonly #kinds: Readonly<Record<Kind, KindStatements>>;
  readonly #run;
  readonly #openRun;
  readonly #touchRun;
  readonly #purgeStaleRuns;
  readonly #forgetOpenSeen;
  readonly #supersedeOpen;
  readonly #see;
  readonly #seeInOpenRuns;
  readonly #forgetSeen;
  readonly #finishRun;
  readonly #complete;
  readonly #completions;

  constructor(readonly db: Db) {
    this.#kinds = {
      posts: kindStatements(db, KIND_SPECS.posts),
      products: kindStatements(db, KIND_SPECS.products),
      coupons: kindStatements(db, KIND_SPECS.coupons),
    };
    const key = 'workspace_id = ? AND kind = ? AND sync_id = ?';
    this.#run = prepared<[number, string, string], { state: RunState }>(
      db,
      `SELECT state FROM sync_runs WHERE ${key}`,
    );
    this.#openRun = prepared<[number, string, string, string, string]>(
      db,
      `INSERT INTO sync_runs (workspace_id, kind, sync_id, state, started_at, updated_at)
       VALUES (?, ?, ?, 'open', ?, ?)`,
    );
    this.#touchRun = prepared<[string, number, string, string]>(
      db,
      `UPDATE sync_runs SET updated_at = ? WHERE ${key}`,
    );
    this.#purgeStaleRuns = prepared<[number, string, string]>(
      db,
      'DELETE FROM sync_runs WHERE workspace_id = ? AND kind = ? AND updated_at < ?',
    );
    this.#forgetOpenSeen = prepared<[number, string]>(
      db,
      `DELETE FROM sync_seen WHERE (workspace_id, kind, sync_id) IN
         (SELECT workspace_id, kind, sync_id FROM sync_runs WHERE workspace_id = ? AND kind = ? AND state = 'open')`,
    );
    this.#supersedeOpen = prepared<[string, number, string]>(
      db,
      `UPDATE sync_runs SET state = 'superseded', updated_at = ?
       WHERE workspace_id = ? AND kind = ? AND state = 'open'`,
    );
    this.#see = prepared<[number, string, string, string]>(
      db,
      'INSERT OR IGNORE INTO sync_seen (workspace_id, kind, sync_id, external_id) VALUES (?, ?, ?, ?)',
    );
    this.#seeInOpenRuns = prepared<[string, number, string]>(
      db,
      `INSERT OR IGNORE INTO sync_seen (workspace_id, kind, sync_id, external_id)
       SELECT workspace_id, kind, sync_id, ? FROM sync_runs WHERE workspace_id = ? AND kind = ? AND state = 'open'`,
    );
    this.#forgetSeen = prepared<[number, string, string]>(db, `DELETE FROM sync_seen WHERE ${key}`);
    this.#finishRun = prepared<[string, number, string, string]>(
      db,
      `UPDATE sync_runs SET state = 'completed', updated_at = ? WHERE ${key}`,
    );
    this.#complete = prepared<[number, string, string]>(
      db,
      `INSERT INTO sync_completions (workspace_id, kind, completed_at) VALUES (?, ?, ?)
       ON CONFLICT (workspace_id, kind) DO UPDATE SET completed_at = excluded.completed_at`,
    );
    this.#completions = prepared<[number], { kind: Kind; completed_at: string }>(
      db,
      'SELECT kind, completed_at FROM sync_completions WHERE workspace_id = ?',
    );
  }

  /** Inserts the item, updates it when a value differs, or leaves the row untouched. */
  upsert(spec: KindSpec, workspaceId: number, item: Item, now: string): Outcome {
    const statements = this.#kinds[spec.kind];
    const stored = statements.select.get(workspaceId, item.id);
    if (stored && sameValues(spec, stored, item)) return 'unchanged';
    const params: Record<string, SqlValue> = { workspace_id: workspaceId, external_id: item.id, now };
    for (const c of spec.columns) params[c] = item[c] ?? null;
    (stored ? statements.update : statements.insert).run(params);
    return stored ? 'updated' : 'created';
  }

  /** Deletes one item; false when the workspace has none with that id. */
  remove(kind: Kind, workspaceId: number, externalId: string): boolean {
    return this.#kinds[kind].remove.run(workspaceId, externalId).changes > 0;
  }

  count(kind: Kind, workspaceId: number): number {
    return this.#kinds[kind].count.get(workspaceId)!.n;
  }

  /**
   * The state of the sync `syncId` of this kind, once the workspace's syncs of this kind with no
   * batch for RUN_KEPT_MS are forgotten (undefined: a sync not seen, or forgotten).
   */
  runState(kind: Kind, workspaceId: number, syncId: string, now: Date): RunState | undefined {
    this.#purgeStaleRuns.run(workspaceId, kind, new Date(now.getTime() - RUN_KEPT_MS).toISOString());
    return this.#run.get(workspaceId, kind, syncId)?.state;
  }

  /** Starts a full sync: the open one of this kind, if any, is superseded (its ids forgotten). */
  openRun(kind: Kind, workspaceId: number, syncId: string, now: string): void {
    this.#forgetOpenSeen.run(workspaceId, kind);
    this.#supersedeOpen.run(now, workspaceId, kind);
    this.#openRun.run(workspaceId, kind, syncId, now, now);
  }

  /** Records a batch of an open sync (it stays remembered for RUN_KEPT_MS after its last batch). */
  touchRun(kind: Kind, workspaceId: number, syncId: string, now: string): void {
    this.#touchRun.run(now, workspaceId, kind, syncId);
  }

  /** Records that the sync carried this external id. */
  see(kind: Kind, workspaceId: number, syncId: string, externalId: string): void {
    this.#see.run(workspaceId, kind, syncId, externalId);
  }

  /** An item upserted incrementally while a full sync is in progress must survive its completion. */
  seeInOpenRuns(kind: Kind, workspaceId: number, externalId: string): void {
    this.#seeInOpenRuns.run(externalId, workspaceId, kind);
  }

  /**
   * Completes an open full sync: removes the items it did not carry, records its completion time,
   * and keeps it (as completed, without its ids) so that a retried batch deletes nothing more.
   */
  completeRun(kind: Kind, workspaceId: number, syncId: string, now: string): number {
    const deleted = this.#kinds[kind].removeUnseen.run(workspaceId, workspaceId, kind, syncId).changes;
    this.#forgetSeen.run(workspaceId, kind, syncId);
    this.#finishRun.run(now, workspaceId, kind, syncId);
    this.#complete.run(workspaceId, kind, now);
    return deleted;
  }

  /** When each kind's last full sync completed (null: never). */
  lastSyncs(workspaceId: number): Record<Kind, string | null> {
    const out = Object.fromEntries(KINDS.map((k) => [k, null])) as Record<Kind, string | null>;
    for (const row of this.#completions.all(workspaceId)) out[row.kind] = row.completed_at;
    return out;
  }
}

/** A synced coupon, as the widget's coupon check reads it. */
export interface CouponRow {
  readonly code: string;
  readonly discount_type: DiscountType;
  readonly amount: number;
  readonly expires_at: string | null;
  readonly usage_limit: number | null;
  readonly usage_count: number;
}

/** The workspace's coupon with this code (case-insensitively); the latest synced wins a tie. */
export function findCoupon(db: Db, workspaceId: number, code: string): CouponRow | undefined {
  return prepared<[number, string], CouponRow>(
    db,
    `SELECT code, discount_type, amount, expires_at, usage_limit, usage_count FROM coupons
     WHERE workspace_id = ? AND code = ? ORDER BY synced_at DESC, external_id LIMIT 1`,
  ).get(workspaceId, code);
}
