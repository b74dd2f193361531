import { z } from 'zod';
import {
  describeRoutes,
  laravelError,
  laravelValidationError,
  listPage,
  type SameKeys,
  unauthenticated,
  type RouteDoc,
  type ServiceDoc,
} from '../kit/openapi.js';
import type { Website } from './record.js';
import { PATHS } from './routes.js';
import { listQuery, storeBody, updateBody } from './validation.js';

/** The websites API in OpenAPI 3.1: the same paths and methods as routes.ts registers. */

const flag = z.literal([0, 1]);

const website = z
  .object({
    id: z.int(),
    url: z.string().meta({ description: 'The host, lower case, without "www." and port.' }),
    privacy: z.literal([0, 1, 2]),
    password: z.boolean().meta({ description: 'Whether a password is set (it is never returned).' }),
    email: flag,
    exclude_bots: flag,
    exclude_params: z.string().nullable().meta({ description: 'One name per line.' }),
    exclude_ips: z.string().nullable().meta({ description: 'One IP or CIDR per line.' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Website' });

const _sameFields: SameKeys<z.output<typeof website>, Website> = true;

const params = z.object({
  id: z.int().min(1).meta({
    description: 'The website id. An id the caller does not own answers 404, like a missing one.',
  }),
});

const record = z.object({ data: website, status: z.literal(200) });

const deleted = z.object({
  id: z.int(),
  object: z.literal('website'),
  deleted: z.literal(true),
  status: z.literal(200),
});

const update = (method: 'put' | 'patch'): RouteDoc => ({
  method,
  path: PATHS.item,
  summary: `Update a website (${method.toUpperCase()})`,
  description: 'Changes the fields sent; url is ignored. PUT and PATCH behave the same.',
  params,
  body: updateBody,
  answers: { 200: { description: 'The updated website.', schema: record } },
  errors: [400, 401, 404, 422],
});

const destroy = (path: string, summary: string, description: string): RouteDoc => ({
  method: 'delete',
  path,
  summary,
  description,
  params,
  answers: { 200: { description: 'Deleted.', schema: deleted } },
  errors: [401, 404],
});

const service: ServiceDoc = {
  tag: 'websites',
  security: 'apiKey',
  bodyTypes: ['application/x-www-form-urlencoded', 'application/json', 'multipart/form-data'],
  errors: {
    400: { description: 'The body could not be read as fields.', schema: laravelError },
    401: { description: 'Missing or unknown API key.', schema: unauthenticated },
    404: {
      description: 'No such website, or another owner\'s: "Resource not found.".',
      schema: laravelError,
    },
    422: { description: 'Validation failed: the messages of each field.', schema: laravelValidationError },
  },
};

/** The routes, for the OpenAPI document (and the tests that check it against the validators). */
export const websiteRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: PATHS.collection,
    summary: 'List websites',
    description: "The caller's websites, sorted by host (ties by id), a page at a time.",
    query: listQuery,
    answers: {
      200: {
        description: 'One page of websites. The links keep the query parameters and set page.',
        schema: listPage(website),
      },
    },
    errors: [401, 422],
  },
  {
    method: 'post',
    path: PATHS.collection,
    summary: 'Store a website',
    description: 'HTTP status 201; the body says status 200, as the original does.',
    body: storeBody,
    answers: { 201: { description: 'The new website.', schema: record } },
    errors: [400, 401, 422],
  },
  {
    method: 'get',
    path: PATHS.item,
    summary: 'Show a website',
    params,
    answers: { 200: { description: 'The website.', schema: record } },
    errors: [401, 404],
  },
  update('put'),
  update('patch'),
  destroy(PATHS.item, 'Delete a website', 'The path clients of the original call.'),
  destroy(
    PATHS.destroy,
    'Delete a website (documented path)',
    'The delete path of the interface specification (no /api/v1 prefix); same as DELETE /api/v1/websites/{id}.',
  ),
];

export const websitesOpenApi = describeRoutes(service, websiteRouteDocs);
