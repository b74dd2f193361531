import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * The request input of the websites and reports APIs, read as Laravel's `$request->input()` reads
 * it, so the original clients (PHP cURL, phpRank, Pipedream) get the answers they got there:
 * - `multipart/form-data` bodies are fields like a urlencoded form (files are refused: 413);
 * - an empty body sent as `application/json` is no input, not a 400;
 * - on POST, PUT and PATCH the query string's fields join the body's (the body wins a clash).
 */

/** Fields a multipart body may have; far above any form of these APIs. */
export const MULTIPART_MAX_FIELDS = 100;

const MERGED = new Set(['POST', 'PUT', 'PATCH']);

/** A multipart body as `attachFieldsToBody: 'keyValues'` leaves it: field → value(s). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The input of a request: the query's fields under the body's. A body that is not an object of
 * fields (a JSON array or string) is left as it is, so the route's check answers its 400.
 */
export function mergedInput(query: unknown, body: unknown): unknown {
  if (body !== undefined && body !== null && !isPlainObject(body)) return body;
  return { ...(isPlainObject(query) ? query : {}), ...(body ?? {}) };
}

/** Registers the input rules on `scope` (a service's own scope: other services keep theirs). */
export async function laravelInput(scope: FastifyInstance): Promise<void> {
  const bodyLimit = scope.initialConfig.bodyLimit ?? 1024 * 1024;
  await scope.register(multipart, {
    attachFieldsToBody: 'keyValues',
    limits: { fields: MULTIPART_MAX_FIELDS, parts: MULTIPART_MAX_FIELDS, files: 0, fieldSize: bodyLimit },
  });
  const json = scope.getDefaultJsonParser('error', 'error');
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, (request, body, done) => {
    if (typeof body === 'string' && body.trim() === '') done(null, undefined);
    else json(request, body as string, done);
  });
  scope.addHook('preHandler', async (request: FastifyRequest) => {
    if (MERGED.has(request.method)) request.body = mergedInput(request.query, request.body);
  });
}
