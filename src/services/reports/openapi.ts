import { z } from 'zod';
import {
  describeRoutes,
  laravelError,
  laravelValidationError,
  listPage,
  unauthenticated,
  type RouteDoc,
  type ServiceDoc,
  type SameKeys,
} from '../kit/openapi.js';
import { pageField } from '../kit/pagination.js';
import { CHECK_NAMES } from './checks/types.js';
import type { ReportRecord } from './record.js';
import { REPORT_RESULTS } from './score.js';
import { listQuery, projectsQuery, storeBody, updateBody } from './validation.js';

/** The reports API in OpenAPI 3.1: the same paths and methods as routes.ts registers. */

const check = z.object({
  passed: z.boolean(),
  importance: z.enum(['high', 'medium', 'low']),
  value: z.unknown().meta({
    description:
      'What was found (text, count, list or object, per check). Lists show their first 20 entries, texts their first 256 characters and URLs their first 2048; counts and lengths are of the whole page.',
  }),
  errors: z
    .record(z.string(), z.unknown())
    .optional()
    .meta({ description: 'Only when the check fails, e.g. {"missing": null} or {"too_long": 72}.' }),
});

const report = z
  .object({
    id: z.int(),
    url: z
      .string()
      .meta({ description: 'The page URL without scheme, www. and the trailing / of a root URL.' }),
    project: z.string().meta({ description: 'The page’s host name, without www.' }),
    result: z
      .enum(REPORT_RESULTS as ['good', 'decent', 'bad'])
      .meta({ description: 'good: score above 79; decent: 49–79; bad: below 49.' }),
    score: z.int().min(0).max(100),
    results: z
      .object(Object.fromEntries(CHECK_NAMES.map((name) => [name, check])))
      .optional()
      .meta({ description: 'One entry per check (show, store and update only; not in lists).' }),
    privacy: z.literal([0, 1, 2]).meta({ description: '0 = Public, 1 = Private, 2 = Password.' }),
    password: z.boolean().meta({ description: 'Whether a password is set.' }),
    generated_at: z.iso.datetime(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Report' });

const _sameFields: SameKeys<z.output<typeof report>, ReportRecord> = true;

const params = z.object({ id: z.int().min(1).meta({ description: 'The report id.' }) });
const record = z.object({ data: report, status: z.literal(200) });

const update = (method: 'put' | 'patch'): RouteDoc => ({
  method,
  path: '/api/v1/reports/:id',
  summary: `Update a report (${method.toUpperCase()})`,
  description:
    'Changes privacy and password; results=1 fetches and analyses the page again and moves generated_at.',
  params,
  body: updateBody,
  answers: { 200: { description: 'The updated report.', schema: record } },
  errors: [
    400,
    401,
    404,
    [422, 'A field is invalid, or the page could not be fetched or analysed again (on url).'],
    503,
  ],
});

const service: ServiceDoc = {
  tag: 'reports',
  security: 'apiKey',
  bodyTypes: ['application/x-www-form-urlencoded', 'application/json', 'multipart/form-data'],
  note: 'Served on the analyzer host (analyzer.localhost).',
  errors: {
    400: {
      description: 'The body is not an object of fields (a JSON array, string or number, or plain text).',
      schema: laravelError,
    },
    401: { description: 'Missing or unknown API key.', schema: unauthenticated },
    404: { description: 'No such report, or another user’s.', schema: laravelError },
    422: { description: 'A field is invalid.', schema: laravelValidationError },
    503: {
      description: 'Too many analyses are waiting (services.reports.analysisQueue): retry shortly.',
      schema: laravelError,
    },
  },
};

/** The routes, for the OpenAPI document (and the tests that check it against the validators). */
export const reportRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: '/api/v1/reports',
    summary: 'List reports',
    description: 'The caller’s reports, filtered, sorted (ties by id) and paginated.',
    query: listQuery.extend({ page: pageField }),
    answers: { 200: { description: 'One page of reports (without results).', schema: listPage(report) } },
    errors: [401, [422, 'search is not a string or longer than 255 characters.']],
  },
  {
    method: 'post',
    path: '/api/v1/reports',
    summary: 'Create a report',
    description:
      'Fetches the page (by default within 10 s, at most 5 redirects and 5 MB, public addresses only), analyses it and stores the report.',
    body: storeBody,
    answers: { 201: { description: 'The new report (the body says status 200).', schema: record } },
    errors: [
      400,
      401,
      [422, 'A field is invalid, or the page could not be fetched or analysed (on url, saying why).'],
      503,
    ],
  },
  {
    method: 'get',
    path: '/api/v1/reports/:id',
    summary: 'Show a report',
    description: 'One of the caller’s reports, with its results.',
    params,
    answers: { 200: { description: 'The report.', schema: record } },
    errors: [401, 404],
  },
  update('put'),
  update('patch'),
  {
    method: 'delete',
    path: '/api/v1/reports/:id',
    summary: 'Delete a report',
    description: 'Deletes one of the caller’s reports.',
    params,
    answers: {
      200: {
        description: 'Deleted.',
        schema: z.object({
          id: z.int(),
          object: z.literal('report'),
          deleted: z.literal(true),
          status: z.literal(200),
        }),
      },
    },
    errors: [401, 404],
  },
  {
    method: 'get',
    path: '/api/v1/projects',
    summary: 'List projects',
    description: 'The caller’s project names (page hosts) with their report counts, by name, paginated.',
    query: projectsQuery.extend({ page: pageField }),
    answers: {
      200: {
        description: 'One page of the caller’s projects.',
        schema: listPage(z.object({ project: z.string(), reports: z.int() })),
      },
    },
    errors: [401],
  },
  {
    method: 'delete',
    path: '/api/v1/projects/:project',
    summary: 'Delete a project',
    description: 'Deletes every report of one of the caller’s projects.',
    params: z.object({ project: z.string().meta({ description: 'The project name (a page host).' }) }),
    answers: {
      200: {
        description: 'Deleted.',
        schema: z.object({
          id: z.string(),
          object: z.literal('project'),
          deleted: z.literal(true),
          status: z.literal(200),
        }),
      },
    },
    errors: [401, [404, 'The caller has no report of this project.']],
  },
];

export const reportsOpenApi = describeRoutes(service, reportRouteDocs);
