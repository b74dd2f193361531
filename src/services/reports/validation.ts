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

function choice<const T extends readonly [string, ...string[]]>(field: string, values: T) {
  return z.enum(values, { error: `The selected ${field} is invalid.` });
}

const pageUrl = requiredString('url').refine((v) => parsePageUrl(v) !== undefined, {
  message: 'The url field must be a valid URL.',
  // Only a present, short enough value is judged as a URL: one message per problem.
  when: (payload) => (payload.issues ?? []).length === 0,
});

export const PER_PAGE = [10, 25, 50, 100] as const;

export const listQuery = z.object({
  search: optionalString('search', 255),
  search_by: optional(choice('search_by', ['url'])),
  project: optionalString('project', 255),
  result: optional(choice('result', REPORT_RESULTS as ['good', 'decent', 'bad'])),
  sort_by: optional(choice('sort_by', SORT_KEYS)).transform((v) => v ?? 'id'),
  sort: optional(choice('sort', ['desc', 'asc'])).transform((v) => v ?? 'desc'),
  per_page: optional(intChoice('per_page', PER_PAGE)).transform((v) => v ?? 10),
});

export const storeBody = z.object({
  url: pageUrl,
  privacy: optional(intChoice('privacy', [0, 1, 2])).transform((v) => v ?? 1),
  password: optionalString('password', 128),
});

export const updateBody = z.object({
  privacy: optional(intChoice('privacy', [0, 1, 2])),
  password: optionalString('password', 128),
  results: optional(intChoice('results', [0, 1])).transform((v) => v ?? 0),
});

export const PASSWORD_REQUIRED = 'The password field is required when privacy is 2.';
