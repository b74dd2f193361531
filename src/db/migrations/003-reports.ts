import type { Migration } from './migration.js';

export const reports: Migration = {
  version: 3,
  sql: `
    CREATE TABLE reports (
      id INTEGER PRIMARY KEY AUTOINCREMENT, -- a deleted report's id is never given to another
      user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      -- As shown (no scheme, no www.), searched and sorted on.
      url TEXT NOT NULL,
      -- The full URL as given, fetched again when the results are updated.
      page_url TEXT NOT NULL,
      project TEXT NOT NULL,
      result TEXT NOT NULL CHECK (result IN ('good', 'decent', 'bad')),
      score INTEGER NOT NULL CHECK (score BETWEEN 0 AND 100),
      -- JSON: check name -> {passed, importance, value, errors?}.
      results TEXT NOT NULL,
      privacy INTEGER NOT NULL DEFAULT 1 CHECK (privacy IN (0, 1, 2)),
      password_hash TEXT,
      generated_at TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
    CREATE INDEX reports_user ON reports (user_id, id);
    CREATE INDEX reports_user_project ON reports (user_id, project);
  `,
};
