import { HttpError } from '../kit/errors.js';
import type { CouponRow } from '../bulksync/store.js';
import type { DiscountType } from '../bulksync/items.js';

export interface AppliedCoupon {
  readonly code: string;
  readonly discount_type: DiscountType;
  readonly amount: number;
  readonly expires_at: string | null;
}

export const COUPON_ERRORS = {
  notFound: 'This coupon code does not exist.',
  expired: 'This coupon has expired.',
  usedUp: 'This coupon has reached its usage limit.',
} as const;

/**
 * Whether a synced coupon applies at `nowMs`. Only a check: redemption happens in the shop, which
 * syncs usage_count back. An expiry that cannot be read counts as expired (a discount is never
 * granted on a guess).
 */
export function checkCoupon(row: CouponRow | undefined, nowMs: number): AppliedCoupon {
  if (!row) throw new HttpError(404, COUPON_ERRORS.notFound, 'coupon_not_found');
  if (row.expires_at !== null) {
    const expires = Date.parse(row.expires_at);
    if (!(expires > nowMs)) throw new HttpError(422, COUPON_ERRORS.expired, 'coupon_expired');
  }
  if (row.usage_limit !== null && row.usage_count >= row.usage_limit) {
    throw new HttpError(422, COUPON_ERRORS.usedUp, 'coupon_usage_limit_reached');
  }
  return {
    code: row.code,
    discount_type: row.discount_type,
    amount: row.amount,
    expires_at: row.expires_at,
  };
}
