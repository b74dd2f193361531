import type { OpenApiFragment } from '../openapi.js';
import { CHECK_NAMES } from './checks/types.js';
import { SORT_KEYS } from './store.js';
import { PER_PAGE } from './validation.js';

/** The reports API in OpenAPI 3.1: the same paths and methods as routes.ts registers. */

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ 'application/json': { schema } });
const HOST = 'Served on the analyzer host (analyzer.localhost).';

const errors = {
  '401': { description: 'Missing or unknown API key.', content: json(ref('Unauthenticated')) },
};
const notFound = {
  '404': {
    description: 'No such report, or another user’s.',
    content: json(ref('LaravelError')),
  },
};
const badBody = {
  '400': {
    description: 'The body is not an object of fields (a JSON array, string or number, or plain text).',
    content: json(ref('LaravelError')),
  },
};
const busy = {
  '503': {
    description: 'Too many analyses are waiting (services.reports.analysisQueue): retry shortly.',
    content: json(ref('LaravelError')),
  },
};
const invalid = (what: string) => ({
  '422': { description: what, content: json(ref('LaravelValidationError')) },
});

const idParam = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'integer', minimum: 1 },
  description: 'The report id.',
};

const query = (name: string, schema: object, description: string) => ({
  name,
  in: 'query',
  required: false,
  schema,
  description,
});

const privacy = { type: 'integer', enum: [0, 1, 2], description: '0 = Public, 1 = Private, 2 = Password.' };
const password = {
  type: 'string',
  maxLength: 128,
  description: 'Password of the report page; required with privacy 2 unless one is already set.',
};

const storeSchema = {
  type: 'object',
  required: ['url'],
  properties: {
    url: {
      type: 'string',
      format: 'uri',
      maxLength: 2048,
      description: 'The http(s) page to analyse, without a user name or password.',
    },
    privacy: { ...privacy, default: 1 },
    password,
  },
};
const updateSchema = {
  type: 'object',
  properties: {
    privacy,
    password,
    results: {
      type: 'integer',
      enum: [0, 1],
      default: 0,
      description: '1: fetch and analyse the page again.',
    },
  },
};
const body = (schema: object) => ({
  required: true,
  content: { 'application/x-www-form-urlencoded': { schema }, 'application/json': { schema } },
});

const one = (status: number, description: string) => ({
  description,
  content: json({
    type: 'object',
    required: ['data', 'status'],
    properties: { data: ref('Report'), status: { const: status } },
  }),
});

const security = [{ apiKey: [] }];

const update = (method: string) => ({
  tags: ['reports'],
  summary: `Update a report (${method})`,
  description: `Changes privacy and password; results=1 fetches and analyses the page again and moves generated_at. ${HOST}`,
  security,
  parameters: [idParam],
  requestBody: body(updateSchema),
  responses: {
    '200': one(200, 'The updated report.'),
    ...badBody,
    ...errors,
    ...notFound,
    ...invalid('A field is invalid, or the page could not be fetched or analysed again (on url).'),
    ...busy,
  },
});

const check = {
  type: 'object',
  required: ['passed', 'importance', 'value'],
  properties: {
    passed: { type: 'boolean' },
    importance: { enum: ['high', 'medium', 'low'] },
    value: {
      description:
        'What was found (text, count, list or object, per check). Lists show their first 20 entries, texts their first 256 characters and URLs their first 2048; counts and lengths are of the whole page.',
    },
    errors: {
      type: 'object',
      description: 'Only when the check fails, e.g. {"missing": null} or {"too_long": 72}.',
    },
  },
};

export const reportsOpenApi: OpenApiFragment = {
  schemas: {
    Report: {
      type: 'object',
      required: [
        'id',
        'url',
        'project',
        'result',
        'score',
        'privacy',
        'password',
        'generated_at',
        'created_at',
        'updated_at',
      ],
      properties: {
        id: { type: 'integer' },
        url: {
          type: 'string',
          description: 'The page URL without scheme, www. and the trailing / of a root URL.',
        },
        project: { type: 'string', description: 'The page’s host name, without www.' },
        result: {
          enum: ['good', 'decent', 'bad'],
          description: 'good: score above 79; decent: 49–79; bad: below 49.',
        },
        score: { type: 'integer', minimum: 0, maximum: 100 },
        results: {
          type: 'object',
          description: 'One entry per check (show, store and update only; not in lists).',
          properties: Object.fromEntries(CHECK_NAMES.map((name) => [name, check])),
        },
        privacy,
        password: { type: 'boolean', description: 'Whether a password is set.' },
        generated_at: { type: 'string', format: 'date-time' },
        created_at: { type: 'string', format: 'date-time' },
        updated_at: { type: 'string', format: 'date-time' },
      },
    },
  },
  paths: {
    '/api/v1/reports': {
      get: {
        tags: ['reports'],
        summary: 'List reports',
        description: `The caller’s reports, filtered, sorted (ties by id) and paginated. ${HOST}`,
        security,
        parameters: [
          query('search', { type: 'string', maxLength: 255 }, 'Case-insensitive substring of the url.'),
          query('search_by', { enum: ['url'], default: 'url' }, 'What search looks in.'),
          query('project', { type: 'string', maxLength: 255 }, 'Only this project.'),
          query('result', { enum: ['good', 'decent', 'bad'] }, 'Only this result.'),
          query('sort_by', { enum: [...SORT_KEYS], default: 'id' }, 'Sort key.'),
          query('sort', { enum: ['desc', 'asc'], default: 'desc' }, 'Sort direction.'),
          query('per_page', { type: 'integer', enum: [...PER_PAGE], default: 10 }, 'Page size.'),
          query('page', { type: 'integer', minimum: 1, default: 1 }, 'Page number.'),
        ],
        responses: {
          '200': {
            description: 'One page of reports (without results).',
            content: json({
              type: 'object',
              required: ['data', 'links', 'meta', 'status'],
              properties: {
                data: { type: 'array', items: ref('Report') },
                links: ref('ListLinks'),
                meta: ref('ListMeta'),
                status: { const: 200 },
              },
            }),
          },
          ...errors,
          ...invalid('A query parameter is outside its allowed values.'),
        },
      },
      post: {
        tags: ['reports'],
        summary: 'Create a report',
        description: `Fetches the page (by default within 10 s, at most 5 redirects and 5 MB, public addresses only), analyses it and stores the report. ${HOST}`,
        security,
        requestBody: body(storeSchema),
        responses: {
          '201': one(200, 'The new report (the body says status 200).'),
          ...badBody,
          ...errors,
          ...invalid(
            'A field is invalid, or the page could not be fetched or analysed (on url, saying why).',
          ),
          ...busy,
        },
      },
    },
    '/api/v1/reports/{id}': {
      get: {
        tags: ['reports'],
        summary: 'Show a report',
        description: `One of the caller’s reports, with its results. ${HOST}`,
        security,
        parameters: [idParam],
        responses: { '200': one(200, 'The report.'), ...errors, ...notFound },
      },
      put: update('PUT'),
      patch: update('PATCH'),
      delete: {
        tags: ['reports'],
        summary: 'Delete a report',
        description: `Deletes one of the caller’s reports. ${HOST}`,
        security,
        parameters: [idParam],
        responses: {
          '200': {
            description: 'Deleted.',
            content: json({
              type: 'object',
              required: ['id', 'object', 'deleted', 'status'],
              properties: {
                id: { type: 'integer' },
                object: { const: 'report' },
                deleted: { const: true },
                status: { const: 200 },
              },
            }),
          },
          ...errors,
          ...notFound,
        },
      },
    },
    '/api/v1/projects': {
      get: {
        tags: ['reports'],
        summary: 'List projects',
        description: `The caller’s project names (page hosts) with their report counts, by name. ${HOST}`,
        security,
        responses: {
          '200': {
            description: 'Every project of the caller.',
            content: json({
              type: 'object',
              required: ['data', 'status'],
              properties: {
                data: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['project', 'reports'],
                    properties: { project: { type: 'string' }, reports: { type: 'integer' } },
                  },
                },
                status: { const: 200 },
              },
            }),
          },
          ...errors,
        },
      },
    },
  },
};
