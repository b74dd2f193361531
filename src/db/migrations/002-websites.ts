import type { Migration } from './index.js';

export const websites: Migration = {
  version: 2,
  sql: `
    CREATE TABLE websites (
      id INTEGER PRIMARY KEY,
      user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      url TEXT NOT NULL,
      privacy INTEGER NOT NULL DEFAULT 1,
      password_hash TEXT,
      email INTEGER NOT NULL DEFAULT 0,
      exclude_bots INTEGER NOT NULL DEFAULT 1,
      exclude_params TEXT,
      exclude_ips TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      UNIQUE (user_id, url)
    );
  `,
};
