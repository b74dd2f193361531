import type { Migration } from './index.js';

export const widget: Migration = {
  version: 5,
  sql: `
  `,
};
