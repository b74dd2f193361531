import type { z } from 'zod';
import { HttpError, type FieldErrors } from './errors.js';

/** Groups zod issues by their top-level field: the 422 body's `{field: [messages]}`. */
export function fieldErrors(issues: readonly z.core.$ZodIssue[]): FieldErrors {
  const out: FieldErrors = {};
  for (const issue of issues) {
    const field = issue.path.length > 0 ? issue.path.map(String).join('.') : '_';
    (out[field] ??= []).push(issue.message);
  }
  return out;
}

/** Parses `input` with `schema`, or throws the 422 that lists every failing field. */
export function validate<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input ?? {});
  if (!parsed.success) throw HttpError.validation(fieldErrors(parsed.error.issues));
  return parsed.data;
}

/**
 * The request body as a field map: a form or a JSON object. No body (or JSON null) counts as
 * empty; anything else (an array, a string, plain text) is a 400.
 */
export function bodyFields(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new HttpError(400, 'The request body must be an object of fields.', 'bad_request');
  }
  return body as Record<string, unknown>;
}
