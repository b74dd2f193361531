import type { Migration } from './migration.js';

/** Users of the websites and reports APIs, and their API keys (SHA-256 of the key, never the key). */
export const accounts: Migration = {
  version: 1,
  sql: `
    CREATE TABLE users (
      id INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      created_at TEXT NOT NULL
    );
    CREATE TABLE api_keys (
      id INTEGER PRIMARY KEY,
      user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      key_hash BLOB NOT NULL UNIQUE,
      created_at TEXT NOT NULL
    );
  `,
};
