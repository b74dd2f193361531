import type { Migration } from './migration.js';

/**
 * Coupons keep WooCommerce's own discount types (percent, fixed_cart, fixed_product) beside
 * "fixed". SQLite cannot change a CHECK in place: the table is rebuilt, rows and index alike.
 */
export const couponTypes: Migration = {
  version: 12,
  sql: `
    CREATE TABLE coupons_new (
      workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      external_id TEXT NOT NULL,
      code TEXT NOT NULL COLLATE NOCASE,
      discount_type TEXT NOT NULL CHECK (discount_type IN ('percent', 'fixed_cart', 'fixed_product', 'fixed')),
      amount REAL NOT NULL,
      expires_at TEXT,
      usage_limit INTEGER,
      usage_count INTEGER NOT NULL DEFAULT 0,
      synced_at TEXT NOT NULL,
      PRIMARY KEY (workspace_id, external_id)
    );
    INSERT INTO coupons_new (workspace_id, external_id, code, discount_type, amount, expires_at, usage_limit,
        usage_count, synced_at)
      SELECT workspace_id, external_id, code, discount_type, amount, expires_at, usage_limit, usage_count, synced_at
      FROM coupons;
    DROP TABLE coupons;
    ALTER TABLE coupons_new RENAME TO coupons;
    CREATE INDEX coupons_code ON coupons (workspace_id, code);
  `,
};
