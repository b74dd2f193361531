import { z } from 'zod';
import { HttpError, type FieldErrors } from '../errors.js';
import { intChoice, optionalString, PRIVACY, requiredString } from '../fields.js';
import { bodyFields, fieldErrors } from '../validation.js';
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

const url = requiredString('url').transform((value, ctx) => {
  const host = normaliseHost(value);
  if (host === undefined) {
    ctx.addIssue({ code: 'custom', message: 'The url field must be a valid URL.' });
    return z.NEVER;
  }
  return host;
});

/** The fields shared by store and update (url is store's alone: update ignores it). */
const SETTINGS = {
  privacy: intChoice('privacy', [PRIVACY.public, PRIVACY.private, PRIVACY.password]).optional(),
  password: optionalString('password', 255),
  email: intChoice('email', [0, 1]).optional(),
  exclude_bots: intChoice('exclude_bots', [0, 1]).optional(),
  exclude_params: lines('exclude_params', isParamName, 'parameter name'),
  exclude_ips: lines('exclude_ips', isIpOrCidr, 'IP address or CIDR range'),
};

const STORE = { url, ...SETTINGS };

type Shape = Record<string, z.ZodType>;
type Parsed<S extends Shape> = { [K in keyof S]?: z.output<S[K]> };

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
  if ((values.privacy ?? PRIVACY.private) === PRIVACY.password && values.password === undefined) {
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

/** A query value: one string; "" (as Laravel turns it into null) and absent are both undefined. */
const queryValue = (field: string) =>
  z
    .string({ error: `The ${field} field must be a string.` })
    .optional()
    .transform((v) => (v === '' ? undefined : v));

const LIST = {
  search: queryValue('search').pipe(
    z.string().max(255, 'The search field must not be greater than 255 characters.').optional(),
  ),
  sort: queryValue('sort').pipe(
    z.enum(['asc', 'desc'], { error: 'The selected sort is invalid.' }).optional(),
  ),
  per_page: queryValue('per_page').transform((v, ctx) => {
    if (v === undefined) return undefined;
    if (!/^[+-]?\d+$/.test(v)) {
      ctx.addIssue({ code: 'custom', message: 'The per_page field must be an integer.' });
      return z.NEVER;
    }
    const n = Number(v);
    if (n < PER_PAGE.min || n > PER_PAGE.max) {
      ctx.addIssue({
        code: 'custom',
        message: `The per_page field must be between ${PER_PAGE.min} and ${PER_PAGE.max}.`,
      });
      return z.NEVER;
    }
    return n;
  }),
};

/** Validates the list's query (page is read apart, as Laravel does: anything but a positive integer is 1). */
export function parseList(query: unknown): ListParams {
  const { values, errors } = parseFields(LIST, bodyFields(query));
  fail(errors);
  const search = values.search?.toLowerCase();
  return {
    search,
    searchAscii: search === undefined ? undefined : asciiSearch(search),
    sort: values.sort ?? 'asc',
    perPage: values.per_page ?? PER_PAGE.default,
  };
}
