import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../context.js';
import { HttpError } from '../kit/errors.js';
import { callerOf, requireWorkspaceToken } from './auth.js';
import { BATCH_SIZE, parseChanged, parseFullSync } from './batch.js';
import { CHANGED_KINDS, FULL_SYNC_KINDS, KIND_SPECS, KINDS } from './kinds.js';
import { CatalogueStore } from './store.js';
import { CatalogueSync } from './sync.js';

/**
 * Where the endpoints answer: the spec's /v1/wp/*, and /api/v1/wp/* where the original service's
 * WordPress plugin sends them (the same handlers).
 */
export const WP_PREFIXES = ['/v1/wp', '/api/v1/wp'] as const;

/** The sync endpoints take JSON only (the service app also parses forms and plain text). */
function jsonBody(request: FastifyRequest): unknown {
  const type = request.headers['content-type'];
  if (request.body !== undefined && !/^application\/json\s*(;|$)/i.test(type ?? '')) {
    throw new HttpError(415, 'Send the request body as application/json.', 'unsupported_media_type');
  }
  return request.body;
}

export function registerRoutes(app: FastifyInstance, { db, config }: ServiceContext): void {
  const store = new CatalogueStore(db);
  const sync = new CatalogueSync(store);
  const limits = { batch_size: BATCH_SIZE, max_body_bytes: config.bulksync.maxBodyBytes };
  requireWorkspaceToken(app, db);

  for (const prefix of WP_PREFIXES) {
    app.post(`${prefix}/handshake`, async (request) => {
      const { workspace, tokenId } = callerOf(request);
      const counts = Object.fromEntries(KINDS.map((k) => [k, store.count(k, workspace.id)]));
      return {
        workspace: { id: workspace.id, name: workspace.name },
        token_id: tokenId,
        counts,
        last_sync: store.lastSyncs(workspace.id),
        limits,
      };
    });

    for (const kind of FULL_SYNC_KINDS) {
      const spec = KIND_SPECS[kind];
      app.post(`${prefix}/${kind}/sync`, async (request) => {
        const batch = parseFullSync(spec, jsonBody(request));
        return sync.fullSync(spec, callerOf(request).workspace.id, batch);
      });
    }
    for (const kind of CHANGED_KINDS) {
      const spec = KIND_SPECS[kind];
      app.post(`${prefix}/${kind}/changed`, async (request) => {
        const batch = parseChanged(spec, jsonBody(request));
        return sync.changed(spec, callerOf(request).workspace.id, batch);
      });
    }
  }
}
