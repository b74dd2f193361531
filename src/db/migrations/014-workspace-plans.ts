import type { Migration } from './migration.js';

/**
 * A workspace's plan (issue 21, per-tenant limits): the gateway's tier for requests with one of the
 * workspace's tokens when tiers.workspaceTokenPlan is on. NULL: no plan, the default tier.
 */
export const workspacePlans: Migration = {
  version: 14,
  sql: `ALTER TABLE workspaces ADD COLUMN plan TEXT;`,
};
