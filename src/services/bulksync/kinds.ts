import type { z } from 'zod';
import { couponItem, postItem, productItem, type SqlValue } from './items.js';

/** The three kinds of catalogue item, each with its table and the columns its item fills. */

export const KINDS = ['posts', 'products', 'coupons'] as const;
export type Kind = (typeof KINDS)[number];

/** The kinds with a full sync, and those that can also change item by item (coupons only sync whole). */
export const FULL_SYNC_KINDS: readonly Kind[] = KINDS;
export const CHANGED_KINDS: readonly Kind[] = ['posts', 'products'];

/** A validated item: its external id and one value per data column. */
export type Item = { readonly id: string } & Readonly<Record<string, SqlValue>>;

export interface KindSpec {
  readonly kind: Kind;
  readonly table: string;
  readonly item: z.ZodType<Item>;
  /** The data columns, named as the item's fields. */
  readonly columns: readonly string[];
  /** Set to the time of the insert only. */
  readonly createdStamp?: string;
  /** Set to the time of the insert and of each change (never when nothing changed). */
  readonly changedStamp: string;
  /** A column whose value must be unique (case-insensitively) among a batch's items. */
  readonly uniqueColumn?: string;
}

export const KIND_SPECS: Readonly<Record<Kind, KindSpec>> = {
  posts: {
    kind: 'posts',
    table: 'posts',
    item: postItem,
    columns: ['title', 'url', 'content', 'excerpt', 'status', 'modified_at'],
    createdStamp: 'created_at',
    changedStamp: 'updated_at',
  },
  products: {
    kind: 'products',
    table: 'products',
    item: productItem,
    columns: ['name', 'url', 'price', 'currency', 'sku', 'stock_status', 'description'],
    createdStamp: 'created_at',
    changedStamp: 'updated_at',
  },
  coupons: {
    kind: 'coupons',
    table: 'coupons',
    item: couponItem,
    columns: ['code', 'discount_type', 'amount', 'expires_at', 'usage_limit', 'usage_count'],
    changedStamp: 'synced_at',
    // The widget finds a coupon by its code.
    uniqueColumn: 'code',
  },
};

/** True when the stored row already holds exactly the item's values. */
export function sameValues(spec: KindSpec, stored: Readonly<Record<string, SqlValue>>, item: Item): boolean {
  return spec.columns.every((c) => stored[c] === item[c]);
}
