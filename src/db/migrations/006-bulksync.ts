import type { Migration } from './index.js';

/** The catalogue a workspace's site pushes through /v1/wp/*: posts, products and coupons, by external id. */
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
  `,
};
