import type { Db } from '../../../db/database.js';
import { prepared } from '../../../db/statements.js';

/**
 * The widget's read of the coupons table (bulk sync writes it, through its catalogue store): the
 * coupon a visitor's code names in the workspace.
 */

export interface CouponRow {
  readonly code: string;
  readonly discount_type: 'percent' | 'fixed';
  readonly amount: number;
  readonly expires_at: string | null;
  readonly usage_limit: number | null;
  readonly usage_count: number;
}

export function findCoupon(db: Db, workspaceId: number, code: string): CouponRow | undefined {
  return prepared<[number, string], CouponRow>(
    db,
    `SELECT code, discount_type, amount, expires_at, usage_limit, usage_count FROM coupons
     WHERE workspace_id = ? AND code = ? ORDER BY synced_at DESC, external_id LIMIT 1`,
  ).get(workspaceId, code);
}
