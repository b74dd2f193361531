import type { Migration } from './index.js';

export const bulkSync: Migration = {
  version: 6,
  sql: `
  `,
};
