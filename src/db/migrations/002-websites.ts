import type { Migration } from './migration.js';

/**
 * The websites of the websites API, each owned by a user. `url` is the normalised host, unique per
 * owner; that index also serves the list (owner, then host order). Only a password's scrypt hash is
 * kept. AUTOINCREMENT: a deleted website's id is never given to a new one (as the original's MySQL).
 */
export const websites: Migration = {
  version: 2,
  sql: `
    CREATE TABLE websites (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      url TEXT NOT NULL,
      privacy INTEGER NOT NULL DEFAULT 1 CHECK (privacy IN (0, 1, 2)),
      password_hash TEXT,
      email INTEGER NOT NULL DEFAULT 0 CHECK (email IN (0, 1)),
      exclude_bots INTEGER NOT NULL DEFAULT 1 CHECK (exclude_bots IN (0, 1)),
      exclude_params TEXT,
      exclude_ips TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      UNIQUE (user_id, url)
    );
  `,
};
