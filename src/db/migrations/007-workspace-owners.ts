import type { Migration } from './migration.js';

/**
 * Each workspace belongs to a user: the widget attributes a session only to a website of that
 * user. Existing workspaces go to the first user (lowest id), when there is one; a workspace still
 * without an owner is given one when a service next opens the database (see adoptOrphanWorkspaces).
 */
export const workspaceOwners: Migration = {
  version: 7,
  sql: `
    ALTER TABLE workspaces ADD COLUMN user_id INTEGER REFERENCES users(id) ON DELETE SET NULL;
    UPDATE workspaces SET user_id = (SELECT min(id) FROM users) WHERE user_id IS NULL;
    CREATE INDEX workspaces_user ON workspaces (user_id);
  `,
};
