import type { Migration } from './index.js';

export const reports: Migration = {
  version: 3,
  sql: `
    CREATE TABLE reports (
      id INTEGER PRIMARY KEY,
      user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      url TEXT NOT NULL,
      project TEXT NOT NULL,
      result TEXT NOT NULL CHECK (result IN ('good', 'decent', 'bad')),
      score INTEGER NOT NULL,
      results TEXT NOT NULL,
      privacy INTEGER NOT NULL DEFAULT 1,
      password_hash TEXT,
      generated_at TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
    CREATE INDEX reports_user ON reports (user_id, id);
  `,
};
