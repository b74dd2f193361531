import { z } from 'zod';
import { intChoice, optionalString, orDefault, requiredString } from '../kit/fields.js';
import { REPORT_RESULTS } from './score.js';
import { SORT_KEYS } from './store.js';
import { parsePageUrl } from './url.js';

/** Request schemas of the reports API. Empty form values count as not given, as in Laravel. */

const blankToUndefined = (v: unknown) => (v === '' || v === null ? undefined : v);

function optional<S extends z.ZodType>(schema: S) {
  return z.preprocess(blankToUndefined, schema.optional());
}

/** A field that is `value` when not given (or blank). */
function withDefault<S extends z.ZodType>(schema: S, value: z.input<S>) {
  return z.preprocess(blankToUndefined, schema.prefault(value));
}

function choice<const T extends readonly [string, ...string[]]>(field: string, values: T) {
  return z.enum(values, { error: `The selected ${field} is invalid.` });
}

const pageUrl = requiredString('url')
  .refine((v) => parsePageUrl(v) !== undefined, {
    message: 'The url field must be a valid URL.',
    // Only a present, short enough value is judged as a URL: one message per problem.
    when: (payload) => (payload.issues ?? []).length === 0,
  })
  .meta({ format: 'uri', description: 'The http(s) page to analyse, without a user name or password.' });

const privacy = intChoice('privacy', [0, 1, 2]);
const PRIVACY_DESCRIPTION = '0 = Public, 1 = Private, 2 = Password.';
const password = optionalString('password', 128).meta({
  description: 'Password of the report page; required with privacy 2 unless one is already set.',
});

export const PER_PAGE = [10, 25, 50, 100] as const;

export const listQuery = z.object({
  search: optionalString('search', 255).meta({ description: 'Case-insensitive substring of the url.' }),
  search_by: orDefault(choice('search_by', ['url']), 'url', { type: 'string', enum: ['url'] }).meta({
    description: 'What search looks in; another value reads as url.',
    default: 'url',
  }),
  project: optionalString('project', 255).meta({ description: 'Only this project.' }),
  result: orDefault(choice('result', REPORT_RESULTS as ['good', 'decent', 'bad']).optional(), undefined, {
    type: 'string',
    enum: [...REPORT_RESULTS],
  }).meta({ description: 'Only this result; another value lists every result.' }),
  sort_by: orDefault(choice('sort_by', SORT_KEYS), 'id', { type: 'string', enum: [...SORT_KEYS] }).meta({
    description: 'Sort key; another value reads as id.',
    default: 'id',
  }),
  sort: orDefault(choice('sort', ['desc', 'asc']), 'desc', { type: 'string', enum: ['desc', 'asc'] }).meta({
    description: 'Sort direction; another value reads as desc.',
    default: 'desc',
  }),
  per_page: orDefault(intChoice('per_page', PER_PAGE), 10, { type: 'integer', enum: [...PER_PAGE] }).meta({
    description: 'Page size; another value reads as 10.',
    default: 10,
  }),
});

/** The projects list: a search in the name, the direction by name, the page size. */
export const projectsQuery = z.object({
  search: optionalString('search', 255).meta({
    description: 'Case-insensitive substring of the project name.',
  }),
  sort: orDefault(choice('sort', ['asc', 'desc']), 'asc', { type: 'string', enum: ['asc', 'desc'] }).meta({
    description: 'By name: asc = A-Z, desc = Z-A; another value reads as asc.',
    default: 'asc',
  }),
  per_page: listQuery.shape.per_page,
});

export const storeBody = z.object({
  url: pageUrl,
  privacy: withDefault(privacy, 1).meta({ description: PRIVACY_DESCRIPTION }),
  password,
});

export const updateBody = z.object({
  privacy: optional(privacy).meta({ description: PRIVACY_DESCRIPTION }),
  password,
  results: withDefault(intChoice('results', [0, 1]), 0).meta({
    description: '1: fetch and analyse the page again.',
  }),
});

export const PASSWORD_REQUIRED = 'The password field is required when privacy is 2.';
