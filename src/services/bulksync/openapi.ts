import type { OpenApiFragment } from '../openapi.js';
import { BATCH_SIZE } from './batch.js';
import { DISCOUNT_TYPES, MAX_EXTERNAL_ID, POST_STATUSES, STOCK_STATUSES } from './items.js';
import { CHANGED_KINDS, FULL_SYNC_KINDS, type Kind } from './kinds.js';

/**
 * The bulk-sync endpoints in OpenAPI 3.1 (paths and methods exactly as registered in routes.ts):
 * each under /v1/wp and /api/v1/wp.
 */

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object) => ({ content: { 'application/json': { schema } } });
const error = (description: string) => ({ description, ...json(ref('WidgetError')) });
const text = (maxLength?: number) => ({ type: ['string', 'null'], ...(maxLength ? { maxLength } : {}) });
const dateTime = { type: ['string', 'null'], format: 'date-time' };
const count = { type: 'integer', minimum: 0 };

const ITEM_SCHEMA: Record<Kind, string> = { posts: 'WpPost', products: 'WpProduct', coupons: 'WpCoupon' };

const schemas: Record<string, unknown> = {
  WpExternalId: {
    description: 'The item\'s id in the site (stored as text: 7 and "7" are the same item).',
    oneOf: [{ type: 'string', minLength: 1, maxLength: MAX_EXTERNAL_ID }, { type: 'integer' }],
  },
  WpPost: {
    type: 'object',
    required: ['id', 'title', 'url'],
    properties: {
      id: ref('WpExternalId'),
      title: { type: 'string', minLength: 1, maxLength: 500 },
      url: { type: 'string', format: 'uri', description: 'An http or https URL.' },
      content: text(),
      excerpt: text(),
      status: { enum: [...POST_STATUSES, null] },
      modified_at: dateTime,
    },
  },
  WpProduct: {
    type: 'object',
    required: ['id', 'name', 'url', 'price'],
    properties: {
      id: ref('WpExternalId'),
      name: { type: 'string', minLength: 1, maxLength: 500 },
      url: { type: 'string', format: 'uri', description: 'An http or https URL.' },
      price: { type: 'number', minimum: 0 },
      currency: { type: ['string', 'null'], pattern: '^[A-Za-z]{3}$', default: 'USD' },
      sku: text(191),
      stock_status: { enum: [...STOCK_STATUSES, null] },
      description: text(),
    },
  },
  WpCoupon: {
    type: 'object',
    required: ['id', 'code', 'discount_type', 'amount'],
    properties: {
      id: ref('WpExternalId'),
      code: {
        type: 'string',
        minLength: 1,
        maxLength: 191,
        description: 'Unique per workspace, case-insensitively.',
      },
      discount_type: { enum: [...DISCOUNT_TYPES] },
      amount: { type: 'number', minimum: 0, description: 'At most 100 for a percent coupon.' },
      expires_at: dateTime,
      usage_limit: { type: ['integer', 'null'], minimum: 0 },
      usage_count: { ...count, default: 0 },
    },
  },
  WpSyncResult: {
    type: 'object',
    required: ['sync_id', 'kind', 'received', 'created', 'updated', 'unchanged', 'deleted', 'done', 'total'],
    properties: {
      sync_id: { type: 'string' },
      kind: { enum: [...FULL_SYNC_KINDS] },
      received: count,
      created: count,
      updated: count,
      unchanged: count,
      deleted: {
        ...count,
        description:
          'Items the completed sync did not carry, removed (0 unless done, and 0 for a batch of a sync that had already completed).',
      },
      done: { type: 'boolean' },
      total: { ...count, description: "The workspace's items of this kind after the batch." },
    },
  },
  WpChangedResult: {
    type: 'object',
    required: ['kind', 'created', 'updated', 'unchanged', 'deleted', 'total'],
    properties: {
      kind: { enum: [...CHANGED_KINDS] },
      created: count,
      updated: count,
      unchanged: count,
      deleted: count,
      total: count,
    },
  },
  WpHandshake: {
    type: 'object',
    required: ['workspace', 'token_id', 'counts', 'last_sync', 'limits'],
    properties: {
      workspace: {
        type: 'object',
        required: ['id', 'name'],
        properties: { id: { type: 'integer' }, name: { type: 'string' } },
      },
      token_id: { type: 'string' },
      counts: {
        type: 'object',
        required: [...FULL_SYNC_KINDS],
        properties: Object.fromEntries(FULL_SYNC_KINDS.map((k) => [k, count])),
      },
      last_sync: {
        type: 'object',
        description: 'When the last full sync of each kind completed.',
        required: [...FULL_SYNC_KINDS],
        properties: Object.fromEntries(FULL_SYNC_KINDS.map((k) => [k, dateTime])),
      },
      limits: {
        type: 'object',
        required: ['batch_size', 'max_body_bytes'],
        properties: { batch_size: { const: BATCH_SIZE }, max_body_bytes: { type: 'integer' } },
      },
    },
  },
};

const common = {
  '401': error('The token is missing (missing_token), or invalid or revoked (invalid_token).'),
  '429': error('The wp-plugin limiter (60 per minute per token) is spent (rate_limited).'),
};
const withBody = {
  ...common,
  '400': error('The JSON body is malformed (bad_request).'),
  '413': error('The body exceeds the size bound (payload_too_large).'),
  '415': error('The body is not JSON (unsupported_media_type).'),
  '422': error(
    'validation_failed: fields lists every bad field, items by index ("items.3.url"); nothing was written.',
  ),
};
const security = [{ workspaceToken: [] }];

function fullSync(kind: Kind): Record<string, unknown> {
  return {
    post: {
      summary: `Full sync of the workspace's ${kind}, one batch`,
      description:
        `Upserts up to ${BATCH_SIZE} ${kind} by external id in one transaction. Batches of one sync share ` +
        'sync_id; the batch with done=true (the default) also removes the ' +
        `workspace's ${kind} the sync did not carry. Re-sending identical items changes nothing.\n\n` +
        `One full sync of ${kind} per workspace is open at a time: the first batch of a new sync_id ` +
        'supersedes the open sync (a plugin that stopped mid-sync just starts over with a new sync_id), ' +
        'and every later batch of the superseded sync is refused with 409 sync_superseded, so two syncs ' +
        "never remove each other's items.\n\n" +
        'A batch of a sync that already completed (a retry after a timeout, say) upserts its items again ' +
        'but removes nothing (deleted: 0). So use a new sync_id for each sync: a completed sync_id is ' +
        'remembered for 24 hours, as is an unfinished sync after its last batch (then it is forgotten).',
      tags: ['bulk sync'],
      security,
      requestBody: {
        required: true,
        ...json({
          type: 'object',
          required: ['items'],
          properties: {
            sync_id: {
              type: 'string',
              minLength: 1,
              maxLength: 100,
              description:
                'Chosen by the client, new for each sync (a UUID, say); required when done is false. ' +
                'Without it the batch is a whole sync of its own.',
            },
            items: { type: 'array', maxItems: BATCH_SIZE, items: ref(ITEM_SCHEMA[kind]) },
            done: { type: 'boolean', default: true },
          },
        }),
      },
      responses: {
        '200': { description: 'The batch was applied.', ...json(ref('WpSyncResult')) },
        ...withBody,
        '409': error(
          'sync_superseded: a batch of another sync_id of this kind came while this sync was open, so this ' +
            'sync was abandoned; nothing of this batch was written.',
        ),
      },
    },
  };
}

function changed(kind: Kind): Record<string, unknown> {
  return {
    post: {
      summary: `Incremental changes to the workspace's ${kind}`,
      description: 'Upserts and deletes by external id in one transaction; unknown deleted ids are ignored.',
      tags: ['bulk sync'],
      security,
      requestBody: {
        required: true,
        ...json({
          type: 'object',
          properties: {
            upserted: { type: 'array', maxItems: BATCH_SIZE, items: ref(ITEM_SCHEMA[kind]), default: [] },
            deleted: { type: 'array', maxItems: BATCH_SIZE, items: ref('WpExternalId'), default: [] },
          },
        }),
      },
      responses: {
        '200': { description: 'The changes were applied.', ...json(ref('WpChangedResult')) },
        ...withBody,
      },
    },
  };
}

const paths: Record<string, Record<string, unknown>> = {
  '/v1/wp/handshake': {
    post: {
      summary: 'The workspace of the token and what it holds',
      tags: ['bulk sync'],
      security,
      responses: { '200': { description: 'The workspace.', ...json(ref('WpHandshake')) }, ...common },
    },
  },
};
for (const kind of FULL_SYNC_KINDS) paths[`/v1/wp/${kind}/sync`] = fullSync(kind);
for (const kind of CHANGED_KINDS) paths[`/v1/wp/${kind}/changed`] = changed(kind);

/** The same operation under /api (where the original service's WordPress plugin sends it). */
function alias(path: string, item: Record<string, unknown>): Record<string, unknown> {
  const { post } = item as { post: { description?: string } };
  const note = `The same endpoint as \`${path}\`, at the path the original service's WordPress plugin uses.`;
  return { post: { ...post, description: post.description ? `${note}\n\n${post.description}` : note } };
}
for (const [path, item] of Object.entries(paths)) paths[`/api${path}`] = alias(path, item);

export const bulkSyncOpenApi: OpenApiFragment = { paths, schemas };
