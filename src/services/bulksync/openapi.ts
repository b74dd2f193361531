import { z } from 'zod';
import {
  describeRoutes,
  widgetError,
  type RouteDoc,
  type ServiceDoc,
  type SameKeys,
} from '../kit/openapi.js';
import { BATCH_SIZE, changedRequest, fullSyncRequest } from './batch.js';
import { CHANGED_KINDS, FULL_SYNC_KINDS, KIND_SPECS, type Kind } from './kinds.js';
import { WP_PREFIXES } from './routes.js';
import type { ChangedResult, FullSyncResult } from './sync.js';

/**
 * The bulk-sync endpoints in OpenAPI 3.1 (paths and methods exactly as registered in routes.ts):
 * each under /v1/wp and /api/v1/wp.
 */

const count = z.int().min(0);
const perKind = <S extends z.ZodType>(schema: S) =>
  z.object(Object.fromEntries(FULL_SYNC_KINDS.map((kind) => [kind, schema])) as Record<Kind, S>);

const syncResult = z
  .object({
    sync_id: z.string(),
    kind: z.enum(FULL_SYNC_KINDS as [Kind, ...Kind[]]),
    received: count,
    created: count,
    updated: count,
    unchanged: count,
    deleted: count.meta({
      description:
        'Items the completed sync did not carry, removed (0 unless done, and 0 for a batch of a sync that had already completed).',
    }),
    done: z.boolean(),
    total: count.meta({ description: "The workspace's items of this kind after the batch." }),
  })
  .meta({ id: 'WpSyncResult' });

const changedResult = z
  .object({
    kind: z.enum(CHANGED_KINDS as [Kind, ...Kind[]]),
    created: count,
    updated: count,
    unchanged: count,
    deleted: count,
    total: count,
  })
  .meta({ id: 'WpChangedResult' });

const _sameFields: [
  SameKeys<z.output<typeof syncResult>, FullSyncResult>,
  SameKeys<z.output<typeof changedResult>, ChangedResult>,
] = [true, true];

const handshake = z
  .object({
    workspace: z.object({ id: z.int(), name: z.string() }),
    token_id: z.string(),
    counts: perKind(count),
    last_sync: perKind(z.iso.datetime().nullable()).meta({
      description: 'When the last full sync of each kind completed.',
    }),
    limits: z.object({ batch_size: z.literal(BATCH_SIZE), max_body_bytes: z.int() }),
  })
  .meta({ id: 'WpHandshake' });

const fullSync = (kind: Kind): RouteDoc => ({
  method: 'post',
  path: `/${kind}/sync`,
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
  body: fullSyncRequest(KIND_SPECS[kind]),
  answers: { 200: { description: 'The batch was applied.', schema: syncResult } },
  errors: [400, 401, 409, 413, 415, 422, 429],
});

const changed = (kind: Kind): RouteDoc => ({
  method: 'post',
  path: `/${kind}/changed`,
  summary: `Incremental changes to the workspace's ${kind}`,
  description: 'Upserts and deletes by external id in one transaction; unknown deleted ids are ignored.',
  body: changedRequest(KIND_SPECS[kind]),
  answers: { 200: { description: 'The changes were applied.', schema: changedResult } },
  errors: [400, 401, 413, 415, 422, 429],
});

const service: ServiceDoc = {
  tag: 'bulk sync',
  security: 'workspaceToken',
  bodyTypes: ['application/json'],
  errors: Object.fromEntries(
    Object.entries({
      400: 'The JSON body is malformed (bad_request).',
      401: 'The token is missing (missing_token), or invalid or revoked (invalid_token).',
      409:
        'sync_superseded: a batch of another sync_id of this kind came while this sync was open, so this ' +
        'sync was abandoned; nothing of this batch was written.',
      413: 'The body exceeds the size bound (payload_too_large).',
      415: 'The body is not JSON (unsupported_media_type).',
      422: 'validation_failed: fields lists every bad field, items by index ("items.3.url"); nothing was written.',
      429: 'The wp-plugin limiter (60 per minute per token) is spent (rate_limited).',
    }).map(([status, description]) => [status, { description, schema: widgetError }]),
  ),
};

/** The endpoints, their paths below a prefix of WP_PREFIXES. */
const endpoints: readonly RouteDoc[] = [
  {
    method: 'post',
    path: '/handshake',
    summary: 'The workspace of the token and what it holds',
    answers: { 200: { description: 'The workspace.', schema: handshake } },
    errors: [401, 429],
  },
  ...FULL_SYNC_KINDS.map(fullSync),
  ...CHANGED_KINDS.map(changed),
];

/** An endpoint under `prefix`; under the second one it says it is the first one's twin. */
function under(prefix: string, route: RouteDoc): RouteDoc {
  const path = `${prefix}${route.path}`;
  if (prefix === WP_PREFIXES[0]) return { ...route, path };
  const note = `The same endpoint as \`${WP_PREFIXES[0]}${route.path}\`, at the path the original service's WordPress plugin uses.`;
  return { ...route, path, description: route.description ? `${note}\n\n${route.description}` : note };
}

/** The routes, for the OpenAPI document (and the tests that check it against the validators). */
export const bulkSyncRouteDocs: readonly RouteDoc[] = WP_PREFIXES.flatMap((prefix) =>
  endpoints.map((route) => under(prefix, route)),
);

export const bulkSyncOpenApi = describeRoutes(service, bulkSyncRouteDocs);
