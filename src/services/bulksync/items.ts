import { z } from 'zod';
import { documentAs } from '../kit/json-schema.js';

/**
 * The items a site pushes (posts, products, coupons): their validation and their normalised form,
 * which is exactly what a row stores, so that "unchanged" is a plain comparison of values.
 */

export type SqlValue = string | number | null;

const required = (field: string) => `The ${field} field is required.`;
const absent = (input: unknown) => input === undefined || input === null;

export const MAX_EXTERNAL_ID = 191;

/** The external id: a non-empty string or an integer, kept as text (so 7 and "7" are one item). */
export const externalId = documentAs(
  z.unknown().transform((v, ctx): string => {
    if (typeof v === 'string' && v.trim().length > 0 && v.length <= MAX_EXTERNAL_ID) return v;
    if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
    ctx.addIssue({
      code: 'custom',
      message:
        absent(v) || v === ''
          ? required('id')
          : `The id field must be a non-empty string (at most ${MAX_EXTERNAL_ID} characters) or an integer.`,
    });
    return z.NEVER;
  }),
  { oneOf: [{ type: 'string', minLength: 1, maxLength: MAX_EXTERNAL_ID }, { type: 'integer' }] },
).meta({
  id: 'WpExternalId',
  description: 'The item\'s id in the site (stored as text: 7 and "7" are the same item).',
});

function requiredText(field: string, max: number) {
  return z
    .string({
      error: (iss) => (absent(iss.input) ? required(field) : `The ${field} field must be a string.`),
    })
    .trim()
    .min(1, required(field))
    .max(max, `The ${field} field must not be greater than ${max} characters.`);
}

/** Optional text; null, absent and "" all store NULL. */
function optionalText(field: string, max = 1_000_000) {
  return z
    .string({ error: `The ${field} field must be a string.` })
    .max(max, `The ${field} field must not be greater than ${max} characters.`)
    .nullish()
    .transform((v) => (v ? v : null));
}

function httpUrl(field: string) {
  return requiredText(field, 2048)
    .refine((v) => {
      try {
        const { protocol } = new URL(v);
        return protocol === 'http:' || protocol === 'https:';
      } catch {
        return false;
      }
    }, `The ${field} field must be a valid http or https URL.`)
    .meta({ format: 'uri', description: 'An http or https URL.' });
}

function choice<const T extends readonly [string, ...string[]]>(field: string, values: T) {
  return z
    .enum(values, { error: `The selected ${field} is invalid.` })
    .nullish()
    .transform((v) => v ?? null);
}

/**
 * "2026-11-01T10:00:00", or with a space for the T as WordPress's database writes it: a date-time
 * with no offset. WordPress REST's *_gmt fields and WooCommerce's date_*_gmt are UTC without one.
 */
const NO_OFFSET = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)$/;

/**
 * An ISO-8601 date-time with Z or an offset, or without one (then read as UTC, as WordPress and
 * WooCommerce send their *_gmt dates), stored in UTC (toISOString).
 */
function dateTime(field: string) {
  const message = `The ${field} field must be an ISO-8601 date-time.`;
  const withOffset = z.iso.datetime({ offset: true });
  return documentAs(
    z.unknown().transform((v, ctx): string | null => {
      if (v === undefined || v === null) return null;
      if (typeof v === 'string') {
        const local = NO_OFFSET.exec(v);
        const text = local ? `${local[1]}T${local[2]}Z` : v;
        const ms = withOffset.safeParse(text).success ? Date.parse(text) : NaN;
        if (Number.isFinite(ms)) return new Date(ms).toISOString();
      }
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }),
    {
      type: ['string', 'null'],
      description:
        'An ISO-8601 date-time; without an offset ("2026-11-01T10:00:00" or "2026-11-01 10:00:00") it is read as UTC.',
    },
  )
    .optional()
    .transform((v) => v ?? null);
}

/** A number, or a decimal string as WooCommerce sends prices and amounts ("39.50"). */
const DECIMAL = /^-?\d+(?:\.\d+)?$/;

function amount(field: string) {
  return documentAs(
    z.unknown().transform((v, ctx): number => {
      const n = typeof v === 'string' && DECIMAL.test(v.trim()) ? Number(v.trim()) : v;
      if (typeof n === 'number' && Number.isFinite(n) && n >= 0) return n;
      const message =
        absent(v) || v === ''
          ? required(field)
          : typeof n === 'number' && Number.isFinite(n)
            ? `The ${field} field must be at least 0.`
            : `The ${field} field must be a number.`;
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }),
    {
      oneOf: [
        { type: 'number', minimum: 0 },
        { type: 'string', pattern: '^\\s*\\d+(\\.\\d+)?\\s*$' },
      ],
      description: 'A number, or a decimal string as WooCommerce sends it ("39.50").',
    },
  );
}

function count(field: string) {
  return z
    .int({ error: `The ${field} field must be an integer.` })
    .min(0, `The ${field} field must be at least 0.`);
}

const object = <S extends z.ZodRawShape>(shape: S) =>
  z.object(shape, { error: 'The item must be an object.' });

export const POST_STATUSES = ['publish', 'draft', 'private', 'pending', 'future'] as const;
export const STOCK_STATUSES = ['instock', 'outofstock', 'onbackorder'] as const;
/** WooCommerce's coupon types (fixed_cart is its default), and "fixed", this API's first name for fixed_cart. */
export const DISCOUNT_TYPES = ['percent', 'fixed_cart', 'fixed_product', 'fixed'] as const;
export type DiscountType = (typeof DISCOUNT_TYPES)[number];

export const postItem = object({
  id: externalId,
  title: requiredText('title', 500),
  url: httpUrl('url'),
  content: optionalText('content'),
  excerpt: optionalText('excerpt'),
  status: choice('status', POST_STATUSES),
  modified_at: dateTime('modified_at'),
}).meta({ id: 'WpPost' });

export const productItem = object({
  id: externalId,
  name: requiredText('name', 500),
  url: httpUrl('url'),
  price: amount('price'),
  currency: z
    .string({ error: 'The currency field must be 3 letters.' })
    .regex(/^[A-Za-z]{3}$/, 'The currency field must be 3 letters.')
    .transform((v) => v.toUpperCase())
    .nullish()
    .transform((v) => v ?? 'USD')
    .meta({ default: 'USD' }),
  sku: optionalText('sku', 191),
  stock_status: choice('stock_status', STOCK_STATUSES),
  description: optionalText('description'),
}).meta({ id: 'WpProduct' });

export const couponItem = object({
  id: externalId,
  code: requiredText('code', 191).meta({ description: 'Unique per workspace, case-insensitively.' }),
  discount_type: z.enum(DISCOUNT_TYPES, {
    error: (iss) =>
      absent(iss.input) ? required('discount_type') : 'The selected discount_type is invalid.',
  }),
  amount: amount('amount').meta({ description: 'At most 100 for a percent coupon.' }),
  expires_at: dateTime('expires_at'),
  usage_limit: count('usage_limit')
    .nullish()
    .transform((v) => v ?? null),
  usage_count: count('usage_count')
    .nullish()
    .transform((v) => v ?? 0)
    .meta({ default: 0 }),
})
  .superRefine((coupon, ctx) => {
    if (coupon.discount_type === 'percent' && coupon.amount > 100) {
      ctx.addIssue({
        code: 'custom',
        path: ['amount'],
        message: 'The amount field must not be greater than 100 for a percent coupon.',
      });
    }
  })
  .meta({ id: 'WpCoupon' });

export type PostItem = z.output<typeof postItem>;
export type ProductItem = z.output<typeof productItem>;
export type CouponItem = z.output<typeof couponItem>;
