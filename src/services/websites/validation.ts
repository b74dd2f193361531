import { z } from 'zod';
import { HttpError, type FieldErrors } from '../kit/errors.js';
import { intChoice, optionalString, orDefault, PRIVACY, requiredString } from '../kit/fields.js';
import { pageField } from '../kit/pagination.js';
import { bodyFields, fieldErrors } from '../kit/validate.js';
import { asciiSearch, isIpOrCidr, isParamName, normaliseHost, normaliseLines } from './normalize.js';

/**
 * The websites API's request rules, in Laravel's words. Each field is parsed on its own so that
 * the checks across fields (password with privacy 2, a host already taken) can join the same 422.
 */

/** A one-per-line field: absent → undefined (unchanged), null or "" → null (cleared), else the checked lines. */
function lines(field: string, valid: (line: string) => boolean, what: string) {
  return z
    .string({ error: `The ${field} field must be a string.` })
    .max(65535, `The ${field} field must not be greater than 65535 characters.`)
    .nullish()
    .transform((value, ctx) => {
      if (value === undefined) return undefined;
      if (value === null) return null;
      const result = normaliseLines(value, valid);
      if (result.ok) return result.value;
      ctx.addIssue({
        code: 'custom',
        message: `The ${field} field has an invalid ${what}: "${result.line}".`,
      });
      return z.NEVER;
    });
}

const url = requiredString('url')
  .meta({
    description:
      'An http(s) URL or a bare host. Stored as the lower-case host without "www." and without a port; ' +
      'each owner has a host once.',
    examples: ['https://www.example.com/blog', 'example.com'],
  })
  .transform((value, ctx) => {
    const host = normaliseHost(value);
    if (host === undefined) {
      ctx.addIssue({ code: 'custom', message: 'The url field must be a valid URL.' });
      return z.NEVER;
    }
    return host;
  });

/** What store sets a field it was not sent to (update keeps the field's value). */
export const STORE_DEFAULTS = { privacy: PRIVACY.private, email: 0, exclude_bots: 1 } as const;

/** A choice field; blank ("" or null, as a form sends `privacy=`) is not given, as in Laravel. */
const choice = (field: string, allowed: readonly number[]) =>
  z.preprocess((v) => (v === '' || v === null ? undefined : v), intChoice(field, allowed).optional());

const flag = (field: 'email' | 'exclude_bots', description: string) =>
  choice(field, [0, 1]).meta({ description });

/** The fields shared by store and update (url is store's alone: update ignores it). */
const SETTINGS = {
  privacy: choice('privacy', [PRIVACY.public, PRIVACY.private, PRIVACY.password]).meta({
    description:
      'Statistics page: 0 = Public, 1 = Private, 2 = Password (needs a password, now or set before).',
  }),
  password: optionalString('password', 255).meta({
    description: 'Password of the statistics page (effective with privacy 2). Stored hashed, never returned.',
  }),
  email: flag('email', 'Periodic e-mail reports: 0 = Disabled, 1 = Enabled.'),
  exclude_bots: flag('exclude_bots', 'Exclude common bots from tracking: 0 = Disabled, 1 = Enabled.'),
  exclude_params: lines('exclude_params', isParamName, 'parameter name').meta({
    description:
      'URL query parameter names to exclude, one per line (no whitespace, "&", "=", "?" or "#"). Empty clears.',
  }),
  exclude_ips: lines('exclude_ips', isIpOrCidr, 'IP address or CIDR range').meta({
    description: 'IP addresses or CIDR ranges (IPv4 or IPv6) to exclude, one per line. Empty clears.',
  }),
};

const STORE = {
  url,
  ...SETTINGS,
  privacy: SETTINGS.privacy.meta({ default: STORE_DEFAULTS.privacy }),
  email: SETTINGS.email.meta({ default: STORE_DEFAULTS.email }),
  exclude_bots: SETTINGS.exclude_bots.meta({ default: STORE_DEFAULTS.exclude_bots }),
};

/** The bodies as one schema each, for the OpenAPI document (parseStore and parseUpdate check field by field). */
export const storeBody = z.object(STORE);
export const updateBody = z
  .object(SETTINGS)
  .meta({ description: 'Every field optional; a field not sent keeps its value. url is ignored.' });

type Shape = Record<string, z.ZodType>;
/** Complete once there are no errors; before that, a field with errors is absent. */
type Parsed<S extends Shape> = { [K in keyof S]: z.output<S[K]> };

/** Parses each field of `shape` apart: the values that passed, and every field's messages. */
function parseFields<S extends Shape>(
  shape: S,
  body: Record<string, unknown>,
): {
  values: Parsed<S>;
  errors: FieldErrors;
} {
  const values: Record<string, unknown> = {};
  const errors: FieldErrors = {};
  for (const [field, schema] of Object.entries(shape)) {
    const parsed = schema.safeParse(body[field]);
    if (parsed.success) values[field] = parsed.data;
    else errors[field] = Object.values(fieldErrors(parsed.error.issues)).flat();
  }
  return { values: values as Parsed<S>, errors };
}

const PASSWORD_REQUIRED = 'The password field is required when privacy is 2.';

export interface Settings {
  readonly privacy?: number;
  readonly password?: string;
  readonly email?: number;
  readonly exclude_bots?: number;
  readonly exclude_params?: string | null;
  readonly exclude_ips?: string | null;
}

export interface StoreInput extends Settings {
  readonly url: string;
}

function fail(errors: FieldErrors): void {
  if (Object.keys(errors).length > 0) throw HttpError.validation(errors);
}

/** Validates a store body; `hostTaken` tells whether the owner already has a host. Throws the 422. */
export function parseStore(body: unknown, hostTaken: (host: string) => boolean): StoreInput {
  const { values, errors } = parseFields(STORE, bodyFields(body));
  if (values.url !== undefined && hostTaken(values.url)) errors.url = ['The url has already been taken.'];
  if ((values.privacy ?? STORE_DEFAULTS.privacy) === PRIVACY.password && values.password === undefined) {
    (errors.password ??= []).push(PASSWORD_REQUIRED);
  }
  fail(errors);
  return values as StoreInput;
}

/** Validates an update body (url ignored); `hasPassword`: the website already has one. Throws the 422. */
export function parseUpdate(body: unknown, hasPassword: boolean): Settings {
  const { values, errors } = parseFields(SETTINGS, bodyFields(body));
  if (values.privacy === PRIVACY.password && values.password === undefined && !hasPassword) {
    (errors.password ??= []).push(PASSWORD_REQUIRED);
  }
  fail(errors);
  return values;
}

export const PER_PAGE = { min: 10, max: 100, default: 10 } as const;

export interface ListParams {
  /** Lower case; undefined when not given or empty. */
  readonly search?: string;
  /** The search's punycode form, when it has one (see asciiSearch); the list matches either. */
  readonly searchAscii?: string;
  readonly sort: 'asc' | 'desc';
  readonly perPage: number;
}

/** A query value: "" (as Laravel turns it into null) counts as absent. */
const queryValue = <S extends z.ZodType>(schema: S) =>
  z.preprocess((v) => (v === '' ? undefined : v), schema);

const LIST = {
  search: queryValue(
    z
      .string({ error: 'The search field must be a string.' })
      .max(255, 'The search field must not be greater than 255 characters.')
      .optional(),
  ).meta({
    description:
      'Case-insensitive substring of the host. Hosts are stored in punycode: a search with ' +
      'non-ASCII letters also matches the punycode of its whole labels ("bücher" finds ' +
      'xn--bcher-kva.de; a part of a label, such as "büch", does not).',
  }),
  sort: orDefault(z.enum(['asc', 'desc']), 'asc', { type: 'string', enum: ['asc', 'desc'] }).meta({
    description: 'asc = A-Z by host, desc = Z-A; another value reads as asc.',
    default: 'asc',
  }),
  per_page: orDefault(
    z
      .string()
      .regex(/^[+-]?\d+$/)
      .transform(Number)
      .refine((n) => n >= PER_PAGE.min && n <= PER_PAGE.max),
    PER_PAGE.default as number,
    { type: 'integer', minimum: PER_PAGE.min, maximum: PER_PAGE.max },
  ).meta({
    description: `Results per page; a value outside ${PER_PAGE.min}–${PER_PAGE.max} reads as ${PER_PAGE.default}.`,
    default: PER_PAGE.default,
  }),
};

/** The list's query, for the OpenAPI document: LIST and the page (read apart, see parseList). */
export const listQuery = z.object({ ...LIST, page: pageField });

/** Validates the list's query (page is read apart, as Laravel does: anything but a positive integer is 1). */
export function parseList(query: unknown): ListParams {
  const { values, errors } = parseFields(LIST, bodyFields(query));
  fail(errors);
  const search = values.search?.toLowerCase();
  return {
    search,
    searchAscii: search === undefined ? undefined : asciiSearch(search),
    sort: values.sort,
    perPage: values.per_page,
  };
}
