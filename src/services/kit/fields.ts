import { z } from 'zod';
import { documentAs, type JsonSchema } from './json-schema.js';

/**
 * Field parsers shared by the websites and reports APIs. Form bodies carry every value as a
 * string, JSON bodies as numbers: both are accepted. Messages follow Laravel's wording.
 */

/**
 * An integer from a form string or JSON number that must be one of `allowed`. A string is digits
 * with an optional "-" and nothing else: no surrounding whitespace ("%2010"), no "+", no "1e1".
 */
export function intChoice(field: string, allowed: readonly number[]) {
  const message = `The selected ${field} is invalid.`;
  const parse = z.union([z.number(), z.string()], { error: message }).transform((v, ctx) => {
    const n = typeof v === 'number' ? v : /^-?\d+$/.test(v) ? Number(v) : NaN;
    if (!allowed.includes(n)) {
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    return n;
  });
  return documentAs(parse, { type: 'integer', enum: [...allowed] });
}

/** A required string field (trimmed; empty counts as missing). */
export function requiredString(field: string, max = 2048) {
  return z
    .string({ error: `The ${field} field is required.` })
    .trim()
    .min(1, `The ${field} field is required.`)
    .max(max, `The ${field} field must not be greater than ${max} characters.`);
}

/** An optional string field; null and "" mean "not given". */
export function optionalString(field: string, max = 2048) {
  return z
    .string({ error: `The ${field} field must be a string.` })
    .max(max, `The ${field} field must not be greater than ${max} characters.`)
    .nullish()
    .transform((v) => (v === '' || v === null ? undefined : v));
}

export const PRIVACY = { public: 0, private: 1, password: 2 } as const;

/**
 * A list parameter that reads as `fallback` unless `schema` accepts it: the originals' controllers
 * keep a sort, sort key, filter or page size only when it is one they know (`per_page=5`,
 * `sort=foo` are the default, not a 422). Documented as `schema`'s values with the default.
 */
export function orDefault<S extends z.ZodType>(schema: S, fallback: z.output<S>, json: JsonSchema) {
  const parse = z
    .unknown()
    .optional()
    .transform((v): z.output<S> => {
      const parsed = schema.safeParse(v);
      return parsed.success && parsed.data !== undefined ? parsed.data : fallback;
    });
  return documentAs(parse, json);
}
