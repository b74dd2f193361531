import type { OpenApiFragment } from '../openapi.js';
import { PER_PAGE } from './validation.js';

/** The websites API in OpenAPI 3.1: the same paths and methods as routes.ts registers. */

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object) => ({ content: { 'application/json': { schema } } });

const security = [{ apiKey: [] }];

const idParameter = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'The website id. An id the caller does not own answers 404, like a missing one.',
  schema: { type: 'integer', minimum: 1 },
};

const flag = (description: string) => ({ type: 'integer', enum: [0, 1], description });

/** The writable fields; url only on store (update ignores it). */
const settingsProperties = {
  privacy: {
    type: 'integer',
    enum: [0, 1, 2],
    description:
      'Statistics page: 0 = Public, 1 = Private, 2 = Password (needs a password, now or set before).',
  },
  password: {
    type: 'string',
    maxLength: 255,
    description: 'Password of the statistics page (effective with privacy 2). Stored hashed, never returned.',
  },
  email: flag('Periodic e-mail reports: 0 = Disabled, 1 = Enabled.'),
  exclude_bots: flag('Exclude common bots from tracking: 0 = Disabled, 1 = Enabled.'),
  exclude_params: {
    type: ['string', 'null'],
    description:
      'URL query parameter names to exclude, one per line (no whitespace, "&", "=", "?" or "#"). Empty clears.',
  },
  exclude_ips: {
    type: ['string', 'null'],
    description: 'IP addresses or CIDR ranges (IPv4 or IPv6) to exclude, one per line. Empty clears.',
  },
};

const urlProperty = {
  type: 'string',
  maxLength: 2048,
  description:
    'An http(s) URL or a bare host. Stored as the lower-case host without "www." and without a port; ' +
    'each owner has a host once.',
  examples: ['https://www.example.com/blog', 'example.com'],
};

const storeSchema = {
  type: 'object',
  required: ['url'],
  properties: {
    url: urlProperty,
    ...settingsProperties,
    privacy: { ...settingsProperties.privacy, default: 1 },
    email: { ...settingsProperties.email, default: 0 },
    exclude_bots: { ...settingsProperties.exclude_bots, default: 1 },
  },
};

const updateSchema = {
  type: 'object',
  description: 'Every field optional; a field not sent keeps its value. url is ignored.',
  properties: settingsProperties,
};

const body = (schema: object) => ({
  required: true,
  content: {
    'application/x-www-form-urlencoded': { schema },
    'application/json': { schema },
  },
});

const recordResponse = (description: string) => ({
  description,
  ...json({
    type: 'object',
    required: ['data', 'status'],
    properties: { data: ref('Website'), status: { const: 200 } },
  }),
});

const errors = {
  401: { description: 'Missing or unknown API key.', ...json(ref('Unauthenticated')) },
  404: {
    description: 'No such website, or another owner\'s: "Resource not found.".',
    ...json(ref('LaravelError')),
  },
  422: {
    description: 'Validation failed: the messages of each field.',
    ...json(ref('LaravelValidationError')),
  },
  400: { description: 'The body could not be read as fields.', ...json(ref('LaravelError')) },
};

const deleteOperation = (summary: string, description: string) => ({
  tags: ['websites'],
  summary,
  description,
  security,
  parameters: [idParameter],
  responses: {
    200: {
      description: 'Deleted.',
      ...json({
        type: 'object',
        required: ['id', 'object', 'deleted', 'status'],
        properties: {
          id: { type: 'integer' },
          object: { const: 'website' },
          deleted: { const: true },
          status: { const: 200 },
        },
      }),
    },
    401: errors[401],
    404: errors[404],
  },
});

const updateOperation = (method: string) => ({
  tags: ['websites'],
  summary: `Update a website (${method})`,
  description: 'Changes the fields sent; url is ignored. PUT and PATCH behave the same.',
  security,
  parameters: [idParameter],
  requestBody: body(updateSchema),
  responses: {
    200: recordResponse('The updated website.'),
    400: errors[400],
    401: errors[401],
    404: errors[404],
    422: errors[422],
  },
});

export const websitesOpenApi: OpenApiFragment = {
  paths: {
    '/api/v1/websites': {
      get: {
        tags: ['websites'],
        summary: 'List websites',
        description: "The caller's websites, sorted by host (ties by id), a page at a time.",
        security,
        parameters: [
          {
            name: 'search',
            in: 'query',
            description:
              'Case-insensitive substring of the host. Hosts are stored in punycode: a search with ' +
              'non-ASCII letters also matches the punycode of its whole labels ("bücher" finds ' +
              'xn--bcher-kva.de; a part of a label, such as "büch", does not).',
            schema: { type: 'string', maxLength: 255 },
          },
          {
            name: 'sort',
            in: 'query',
            description: 'asc = A-Z by host, desc = Z-A.',
            schema: { type: 'string', enum: ['asc', 'desc'], default: 'asc' },
          },
          {
            name: 'per_page',
            in: 'query',
            description: 'Results per page; outside the bounds is a 422.',
            schema: {
              type: 'integer',
              minimum: PER_PAGE.min,
              maximum: PER_PAGE.max,
              default: PER_PAGE.default,
            },
          },
          {
            name: 'page',
            in: 'query',
            description:
              'Page number; anything but a positive integer reads as 1, a number above 1000000000 as 1000000000.',
            schema: { type: 'integer', minimum: 1, default: 1 },
          },
        ],
        responses: {
          200: {
            description: 'One page of websites. The links keep the query parameters and set page.',
            ...json({
              type: 'object',
              required: ['data', 'links', 'meta', 'status'],
              properties: {
                data: { type: 'array', items: ref('Website') },
                links: ref('ListLinks'),
                meta: ref('ListMeta'),
                status: { const: 200 },
              },
            }),
          },
          401: errors[401],
          422: errors[422],
        },
      },
      post: {
        tags: ['websites'],
        summary: 'Store a website',
        description: 'HTTP status 201; the body says status 200, as the original does.',
        security,
        requestBody: body(storeSchema),
        responses: {
          201: recordResponse('The new website.'),
          400: errors[400],
          401: errors[401],
          422: errors[422],
        },
      },
    },
    '/api/v1/websites/{id}': {
      get: {
        tags: ['websites'],
        summary: 'Show a website',
        security,
        parameters: [idParameter],
        responses: { 200: recordResponse('The website.'), 401: errors[401], 404: errors[404] },
      },
      put: updateOperation('PUT'),
      patch: updateOperation('PATCH'),
      delete: deleteOperation('Delete a website', 'The path clients of the original call.'),
    },
    '/websites/{id}/destroy': {
      delete: deleteOperation(
        'Delete a website (documented path)',
        'The delete path of the interface specification (no /api/v1 prefix); same as DELETE /api/v1/websites/{id}.',
      ),
    },
  },
  schemas: {
    Website: {
      type: 'object',
      required: [
        'id',
        'url',
        'privacy',
        'password',
        'email',
        'exclude_bots',
        'exclude_params',
        'exclude_ips',
        'created_at',
        'updated_at',
      ],
      properties: {
        id: { type: 'integer' },
        url: { type: 'string', description: 'The host, lower case, without "www." and port.' },
        privacy: { type: 'integer', enum: [0, 1, 2] },
        password: { type: 'boolean', description: 'Whether a password is set (it is never returned).' },
        email: { type: 'integer', enum: [0, 1] },
        exclude_bots: { type: 'integer', enum: [0, 1] },
        exclude_params: { type: ['string', 'null'], description: 'One name per line.' },
        exclude_ips: { type: ['string', 'null'], description: 'One IP or CIDR per line.' },
        created_at: { type: 'string', format: 'date-time' },
        updated_at: { type: 'string', format: 'date-time' },
      },
    },
  },
};
