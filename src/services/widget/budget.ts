import type { Db } from '../../db/database.js';
import type { WidgetSettings } from '../config.js';
import { HttpError } from '../kit/errors.js';
import { pruneUsage, takeUsage } from './tables/usage.js';

export type BudgetKind = 'sessions' | 'stored';

export const WORKSPACE_BUDGET_MESSAGE =
  'This workspace has reached its limit of new conversations and messages for now. Please try again later.';

/**
 * The per-workspace storage budgets: new sessions, and what visitors store (messages, events, leads),
 * counted per fixed window in the database (one statement: every process on it shares the count).
 * The gateway bounds each address; this bounds a workspace however many addresses its visitors use.
 */
export class WorkspaceBudget {
  constructor(
    private readonly db: Db,
    private readonly settings: WidgetSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts `n` of `kind` for the workspace (events count one each), or throws the 429 (Retry-After: the window's end). */
  take(workspaceId: number, kind: BudgetKind, n = 1): void {
    const limit =
      kind === 'sessions' ? this.settings.sessionsPerWorkspace : this.settings.messagesPerWorkspace;
    if (limit === 0) return;
    const period = this.settings.budgetPeriod;
    const nowMs = this.now();
    const window = nowMs - (nowMs % period);
    if (n <= limit && takeUsage(this.db, workspaceId, kind, window, n, limit)) return;
    const retryAfter = String(Math.max(1, Math.ceil((window + period - nowMs) / 1000)));
    throw new HttpError(429, WORKSPACE_BUDGET_MESSAGE, 'workspace_budget_exceeded', undefined, {
      'retry-after': retryAfter,
    });
  }

  /** Deletes the windows that have ended. */
  prune(): void {
    const nowMs = this.now();
    pruneUsage(this.db, nowMs - (nowMs % this.settings.budgetPeriod));
  }
}
