import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../db/database.js';
import { requireApiKey } from '../accounts/accounts.js';
import { HttpError, NOT_FOUND } from '../kit/errors.js';
import { listAddress, listPage, pageNumber } from '../kit/pagination.js';
import { hashPassword } from '../accounts/passwords.js';
import { WebsiteData } from './data.js';
import { toWebsite, type Website, type WebsiteRow } from './record.js';
import { parseList, parseStore, parseUpdate, STORE_DEFAULTS } from './validation.js';

/** The paths, in fastify's syntax; the OpenAPI fragment lists the same ones. */
export const PATHS = {
  collection: '/api/v1/websites',
  item: '/api/v1/websites/:id',
  destroy: '/websites/:id/destroy',
} as const;

type IdRequest = FastifyRequest<{ Params: { id: string } }>;

const notFound = () => new HttpError(404, NOT_FOUND, 'not_found');

/** A website id from the path: a positive integer, else no such website. */
function websiteId(request: IdRequest): number {
  const { id } = request.params;
  const n = /^\d{1,15}$/.test(id) ? Number(id) : 0;
  if (n < 1) throw notFound();
  return n;
}

const recordBody = (row: WebsiteRow): { data: Website; status: 200 } => ({
  data: toWebsite(row),
  status: 200,
});

/**
 * The websites API of one user (the API key's owner). Another owner's website answers exactly
 * like a missing one. The list links start with `publicUrl` (services.websites.publicUrl).
 */
export function registerRoutes(app: FastifyInstance, db: Db, publicUrl: string): void {
  requireApiKey(app, db);
  const data = new WebsiteData(db);

  app.get(PATHS.collection, async (request) => {
    const { search, searchAscii, sort, perPage } = parseList(request.query);
    const page = pageNumber((request.query as Record<string, unknown>).page);
    const { total, rows } = data.list(request.userId, {
      search,
      searchAscii,
      sort,
      limit: perPage,
      offset: (page - 1) * perPage,
    });
    return listPage(listAddress(request, publicUrl), rows.map(toWebsite), total, page, perPage, sort);
  });

  app.get(PATHS.item, async (request: IdRequest) => {
    const row = data.find(request.userId, websiteId(request));
    if (!row) throw notFound();
    return recordBody(row);
  });

  app.post(PATHS.collection, async (request, reply) => {
    const user = request.userId;
    const input = parseStore(request.body, (host) => data.hostTaken(user, host));
    // scrypt takes tens of milliseconds: only when a password is given.
    const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
    const row = data.insert(user, {
      url: input.url,
      privacy: input.privacy ?? STORE_DEFAULTS.privacy,
      passwordHash,
      email: input.email ?? STORE_DEFAULTS.email,
      excludeBots: input.exclude_bots ?? STORE_DEFAULTS.exclude_bots,
      excludeParams: input.exclude_params ?? null,
      excludeIps: input.exclude_ips ?? null,
    });
    // The same host stored by a concurrent request while the password was hashed.
    if (!row) throw HttpError.field('url', 'The url has already been taken.');
    return reply.status(201).send(recordBody(row));
  });

  const update = async (request: IdRequest) => {
    const id = websiteId(request);
    const current = data.find(request.userId, id);
    if (!current) throw notFound();
    const input = parseUpdate(request.body, current.password_hash !== null);
    const passwordHash = input.password === undefined ? undefined : await hashPassword(input.password);
    const row = data.update(request.userId, id, {
      privacy: input.privacy,
      passwordHash,
      email: input.email,
      excludeBots: input.exclude_bots,
      excludeParams: input.exclude_params,
      excludeIps: input.exclude_ips,
    });
    // Deleted while the password was hashed.
    if (!row) throw notFound();
    return recordBody(row);
  };
  app.put(PATHS.item, update);
  app.patch(PATHS.item, update);

  const destroy = async (request: IdRequest, reply: FastifyReply) => {
    const id = websiteId(request);
    if (!data.delete(request.userId, id)) throw notFound();
    return reply.send({ id, object: 'website', deleted: true, status: 200 });
  };
  // The spec's path (a slip in the original's documentation) and the one real clients call.
  app.delete(PATHS.destroy, destroy);
  app.delete(PATHS.item, destroy);
}
