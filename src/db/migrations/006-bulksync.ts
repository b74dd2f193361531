import type { Migration } from './migration.js';

/**
 * The catalogue a workspace's site pushes through /v1/wp/*: posts, products and coupons, by
 * external id. A full sync may span several batches: the ids each batch carried are kept in
 * sync_seen until the last batch removes the items the sync did not mention. One full sync per
 * workspace and kind is open at a time; finished syncs are remembered for a while so that a
 * retried batch is recognised.
 */
export const bulkSync: Migration = {
  version: 6,
  sql: `
    CREATE TABLE coupons (
      workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      external_id TEXT NOT NULL,
      code TEXT NOT NULL COLLATE NOCASE,
      discount_type TEXT NOT NULL CHECK (discount_type IN ('percent', 'fixed')),
      amount REAL NOT NULL,
      expires_at TEXT,
      usage_limit INTEGER,
      usage_count INTEGER NOT NULL DEFAULT 0,
      synced_at TEXT NOT NULL,
      PRIMARY KEY (workspace_id, external_id)
    );
    CREATE INDEX coupons_code ON coupons (workspace_id, code);

    CREATE TABLE posts (
      workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      external_id TEXT NOT NULL,
      title TEXT NOT NULL,
      url TEXT NOT NULL,
      content TEXT,
      excerpt TEXT,
      status TEXT CHECK (status IN ('publish', 'draft', 'private', 'pending', 'future')),
      modified_at TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      PRIMARY KEY (workspace_id, external_id)
    );

    CREATE TABLE products (
      workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      external_id TEXT NOT NULL,
      name TEXT NOT NULL,
      url TEXT NOT NULL,
      price REAL NOT NULL CHECK (price >= 0),
      currency TEXT NOT NULL DEFAULT 'USD',
      sku TEXT,
      stock_status TEXT CHECK (stock_status IN ('instock', 'outofstock', 'onbackorder')),
      description TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      PRIMARY KEY (workspace_id, external_id)
    );

    -- A full sync: open while its batches arrive, then completed (its done=true batch) or
    -- superseded (a batch of another sync_id of the same kind came while it was open). Kept until
    -- 24 h after its last batch or end, so that a retried batch of a finished sync is recognised.
    CREATE TABLE sync_runs (
      workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      kind TEXT NOT NULL CHECK (kind IN ('posts', 'products', 'coupons')),
      sync_id TEXT NOT NULL,
      state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'completed', 'superseded')),
      started_at TEXT NOT NULL,
      -- Its last batch, or when it completed or was superseded.
      updated_at TEXT NOT NULL,
      PRIMARY KEY (workspace_id, kind, sync_id)
    ) WITHOUT ROWID;
    -- At most one open full sync per workspace and kind.
    CREATE UNIQUE INDEX sync_runs_open ON sync_runs (workspace_id, kind) WHERE state = 'open';
    CREATE INDEX sync_runs_updated ON sync_runs (workspace_id, kind, updated_at);

    -- The external ids an open sync has carried (dropped when it completes or is superseded).
    CREATE TABLE sync_seen (
      workspace_id INTEGER NOT NULL,
      kind TEXT NOT NULL,
      sync_id TEXT NOT NULL,
      external_id TEXT NOT NULL,
      PRIMARY KEY (workspace_id, kind, sync_id, external_id),
      FOREIGN KEY (workspace_id, kind, sync_id)
        REFERENCES sync_runs (workspace_id, kind, sync_id) ON DELETE CASCADE
    ) WITHOUT ROWID;

    -- When each kind's last full sync completed (the handshake's last_sync).
    CREATE TABLE sync_completions (
      workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      kind TEXT NOT NULL CHECK (kind IN ('posts', 'products', 'coupons')),
      completed_at TEXT NOT NULL,
      PRIMARY KEY (workspace_id, kind)
    ) WITHOUT ROWID;
  `,
};
