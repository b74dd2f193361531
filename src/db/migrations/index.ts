import { accounts } from './001-accounts.js';
import { websites } from './002-websites.js';
import { reports } from './003-reports.js';
import { workspaces } from './004-workspaces.js';
import { widget } from './005-widget.js';
import { bulkSync } from './006-bulksync.js';
import { workspaceOwners } from './007-workspace-owners.js';
import { analytics } from './008-analytics.js';
import { storageBudgets } from './009-storage-budgets.js';
import { realtimeVisitors } from './010-realtime-visitors.js';
import { lastUsed } from './011-last-used.js';
import { couponTypes } from './012-coupon-types.js';
import { widgetInbox } from './013-widget-inbox.js';
import { workspacePlans } from './014-workspace-plans.js';
import type { Migration } from './migration.js';

export type { Migration } from './migration.js';

/** In order. A released migration never changes: a new one follows it. */
export const MIGRATIONS: readonly Migration[] = [
  accounts,
  websites,
  reports,
  workspaces,
  widget,
  bulkSync,
  workspaceOwners,
  analytics,
  storageBudgets,
  realtimeVisitors,
  lastUsed,
  couponTypes,
  widgetInbox,
  workspacePlans,
];
