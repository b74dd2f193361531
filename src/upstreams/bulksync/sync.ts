import { randomUUID } from 'node:crypto';
import type { Transaction } from 'better-sqlite3';
import type { ChangedBatch, FullSyncBatch } from './batch.js';
import type { Kind, KindSpec } from './kinds.js';
import type { CatalogueStore, Outcome } from './store.js';

/** The two ways a site updates its catalogue, each batch in one immediate transaction. */

export interface Tally {
  created: number;
  updated: number;
  unchanged: number;
  deleted: number;
}

export interface FullSyncResult extends Tally {
  readonly sync_id: string;
  readonly kind: Kind;
  readonly received: number;
  readonly done: boolean;
  readonly total: number;
}

export interface ChangedResult extends Tally {
  readonly kind: Kind;
  readonly total: number;
}

const emptyTally = (): Tally => ({ created: 0, updated: 0, unchanged: 0, deleted: 0 });

export class CatalogueSync {
  readonly #fullSync: Transaction<
    (spec: KindSpec, workspaceId: number, batch: FullSyncBatch) => FullSyncResult
  >;
  readonly #changed: Transaction<(spec: KindSpec, workspaceId: number, batch: ChangedBatch) => ChangedResult>;

  constructor(private readonly store: CatalogueStore) {
    this.#fullSync = store.db.transaction((spec, workspaceId, batch) =>
      this.#applyFullSync(spec, workspaceId, batch),
    );
    this.#changed = store.db.transaction((spec, workspaceId, batch) =>
      this.#applyChanged(spec, workspaceId, batch),
    );
  }

  /**
   * Upserts a batch of a full sync and records its ids under the sync; the batch with done=true
   * also removes the workspace's items of this kind that the sync never carried.
   */
  fullSync(spec: KindSpec, workspaceId: number, batch: FullSyncBatch): FullSyncResult {
    return this.#fullSync.immediate(spec, workspaceId, batch);
  }

  /** Upserts and deletes individual items; ids unknown to the workspace are ignored. */
  changed(spec: KindSpec, workspaceId: number, batch: ChangedBatch): ChangedResult {
    return this.#changed.immediate(spec, workspaceId, batch);
  }

  #applyFullSync(spec: KindSpec, workspaceId: number, batch: FullSyncBatch): FullSyncResult {
    const now = new Date();
    const stamp = now.toISOString();
    const syncId = batch.syncId ?? randomUUID();
    const tally = emptyTally();
    this.store.openRun(spec.kind, workspaceId, syncId, now);
    for (const item of batch.items) {
      count(tally, this.store.upsert(spec, workspaceId, item, stamp));
      this.store.see(spec.kind, workspaceId, syncId, item.id);
    }
    if (batch.done) tally.deleted = this.store.completeRun(spec.kind, workspaceId, syncId, stamp);
    return {
      sync_id: syncId,
      kind: spec.kind,
      received: batch.items.length,
      ...tally,
      done: batch.done,
      total: this.store.count(spec.kind, workspaceId),
    };
  }

  #applyChanged(spec: KindSpec, workspaceId: number, batch: ChangedBatch): ChangedResult {
    const stamp = new Date().toISOString();
    const tally = emptyTally();
    for (const item of batch.upserted) {
      count(tally, this.store.upsert(spec, workspaceId, item, stamp));
      this.store.seeInOpenRuns(spec.kind, workspaceId, item.id);
    }
    for (const id of batch.deleted) {
      if (this.store.remove(spec.kind, workspaceId, id)) tally.deleted++;
    }
    return { kind: spec.kind, ...tally, total: this.store.count(spec.kind, workspaceId) };
  }
}

function count(tally: Tally, outcome: Outcome): void {
  tally[outcome]++;
}
