import { randomUUID } from 'node:crypto';
import type { Transaction } from 'better-sqlite3';
import { HttpError } from '../kit/errors.js';
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
   *
   * One full sync per workspace and kind is open at a time: the first batch of a new sync_id
   * supersedes the open one (a plugin that crashed mid-sync simply starts over), whose later
   * batches are then refused with 409 sync_superseded, so two syncs never delete each other's
   * items. A batch of a completed sync (a retry after a timeout) upserts its items again but
   * removes nothing more.
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
    const state = this.store.runState(spec.kind, workspaceId, syncId, now);
    if (state === 'superseded') throw superseded(spec.kind, syncId);
    // A finished sync's batch again: its items are written, but it no longer decides what is deleted.
    const open = state !== 'completed';
    if (state === undefined) this.store.openRun(spec.kind, workspaceId, syncId, stamp);
    else if (open) this.store.touchRun(spec.kind, workspaceId, syncId, stamp);
    const tally = emptyTally();
    for (const item of batch.items) {
      count(tally, this.store.upsert(spec, workspaceId, item, stamp));
      if (open) this.store.see(spec.kind, workspaceId, syncId, item.id);
    }
    if (open && batch.done) tally.deleted = this.store.completeRun(spec.kind, workspaceId, syncId, stamp);
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

function superseded(kind: Kind, syncId: string): HttpError {
  return new HttpError(
    409,
    `The full sync "${syncId}" of ${kind} was superseded by a newer full sync of ${kind} (another sync_id); its remaining batches are refused.`,
    'sync_superseded',
  );
}

function count(tally: Tally, outcome: Outcome): void {
  tally[outcome]++;
}
