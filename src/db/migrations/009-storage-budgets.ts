import type { Migration } from './migration.js';

/**
 * Storage budgets (issue 18): `widget_usage` counts what each workspace's visitors stored per fixed
 * window (shared by every process on the database); `widget_events` gets an index on its receipt
 * time for the retention's deletes; a report claim records when it was made, so a claim whose
 * process died expires after the sender's lease instead of blocking its period for good.
 */
export const storageBudgets: Migration = {
  version: 9,
  sql: `
    CREATE TABLE widget_usage (
      workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      kind TEXT NOT NULL,
      window_ms INTEGER NOT NULL,
      n INTEGER NOT NULL,
      PRIMARY KEY (workspace_id, kind, window_ms)
    ) WITHOUT ROWID;
    CREATE INDEX widget_events_received ON widget_events (received_at);
    ALTER TABLE report_sends ADD COLUMN claimed_ms INTEGER NOT NULL DEFAULT 0;
  `,
};
