import type { Migration } from './migration.js';

/**
 * When each API key and workspace token was last used (`tollgate users list`, `tokens list`), to
 * the minute: a request writes it only when the stored time is a minute old.
 */
export const lastUsed: Migration = {
  version: 11,
  sql: `
    ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;
    ALTER TABLE workspace_tokens ADD COLUMN last_used_at TEXT;
  `,
};
