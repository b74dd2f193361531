import type { Migration } from './migration.js';

/**
 * The realtime view counts visitors apart from pageviews (issue 20): a recent visit records
 * whether it was a new visitor's first pageview. Rows from before (kept 30 minutes at most)
 * count as visitors, as they were shown.
 */
export const realtimeVisitors: Migration = {
  version: 10,
  sql: `
    ALTER TABLE recent_visits ADD COLUMN visitor INTEGER NOT NULL DEFAULT 1;
  `,
};
