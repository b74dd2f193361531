import type { Migration } from './migration.js';

/** Workspaces own the widget and the synced catalogue; their API tokens are "<id>|<secret>", the secret stored as SHA-256. */
export const workspaces: Migration = {
  version: 4,
  sql: `
    CREATE TABLE workspaces (
      id INTEGER PRIMARY KEY,
      name TEXT NOT NULL UNIQUE,
      created_at TEXT NOT NULL
    );
    CREATE TABLE workspace_tokens (
      id TEXT PRIMARY KEY,
      workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      secret_hash BLOB NOT NULL,
      created_at TEXT NOT NULL,
      revoked_at TEXT
    );
  `,
};
