import { z } from 'zod';
import { intChoice, optionalString, requiredString } from '../fields.js';
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
  search_by: withDefault(choice('search_by', ['url']), 'url').meta({ description: 'What search looks in.' }),
  project: optionalString('project', 255).meta({ description: 'Only this project.' }),
  result: optional(choice('result', REPORT_RESULTS as ['good', 'decent', 'bad'])).meta({
    description: 'Only this result.',
  }),
  sort_by: withDefault(choice('sort_by', SORT_KEYS), 'id').meta({ description: 'Sort key.' }),
  sort: withDefault(choice('sort', ['desc', 'asc']), 'desc').meta({ description: 'Sort direction.' }),
  per_page: withDefault(intChoice('per_page', PER_PAGE), 10).meta({ description: 'Page size.' }),
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
