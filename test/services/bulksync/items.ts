// What the bulk-sync tests send and expect, shared by the gateway's side (endpoints.test.ts) and the
// service alone (validation.unit.test.ts, buildService + inject); the widget's tests read SAVE10_ROW.
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { CouponRow } from '../../../src/services/bulksync/store.js';
import type { Reply } from '../../helpers/gateway.js';

/** A post as the plugin sends it; `extra` adds or overrides fields. */
export const post = (id: string | number, title = `Post ${id}`, extra: object = {}) => ({
  id,
  title,
  url: `https://shop.example/p/${id}`,
  ...extra,
});

/** A percent coupon with no expiry and no usage limit, as the widget reads it from the store. */
export const SAVE10_ROW: CouponRow = {
  code: 'SAVE10',
  discount_type: 'percent',
  amount: 10,
  expires_at: null,
  usage_limit: null,
  usage_count: 0,
};

/** That coupon as the plugin syncs it. */
export const SAVE10 = { id: 'c1', ...SAVE10_ROW };

export const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

export const validationFailed = (fields: Record<string, string[]>) => ({
  error: { code: 'validation_failed', message: 'The given data was invalid.', fields },
});

export const NOT_FOUND = { error: { code: 'not_found', message: 'Resource not found.' } };

export interface BatchCounts {
  sync_id?: unknown;
  received?: number;
  created?: number;
  updated?: number;
  unchanged?: number;
  deleted?: number;
  done?: boolean;
  total?: number;
}

/** The whole reply to a batch of a full sync: completed, any sync_id and every count 0 unless given. */
export const batchResult = (kind: 'posts' | 'products' | 'coupons', counts: BatchCounts) => ({
  sync_id: expect.any(String),
  kind,
  received: 0,
  created: 0,
  updated: 0,
  unchanged: 0,
  deleted: 0,
  done: true,
  total: 0,
  ...counts,
});

/** A JSON reply, through the gateway (Reply) or inject: exactly this status and body. */
export function expectJson(reply: Reply | LightMyRequestResponse, status: number, body: unknown): void {
  expect({
    status: 'statusCode' in reply ? reply.statusCode : reply.status,
    type: reply.headers['content-type'],
    body: reply.json(),
  }).toEqual({ status, type: expect.stringMatching(/^application\/json/), body });
}
