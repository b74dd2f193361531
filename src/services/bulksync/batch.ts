import { z } from 'zod';
import { HttpError, type FieldErrors } from '../kit/errors.js';
import { fieldErrors } from '../kit/validate.js';
import { externalId } from './items.js';
import type { Item, KindSpec } from './kinds.js';

/** The request bodies of the sync endpoints, validated whole: one bad item and nothing is written. */

export const BATCH_SIZE = 500;

/**
 * A list field. The envelope takes any elements (checkItems checks the items one by one, to name
 * each bad one); the OpenAPI document shows the list with the kind's `element` schema.
 */
const list = (field: string, element: z.ZodType = z.unknown()) =>
  z
    .array(element, {
      error: (iss) =>
        iss.input === undefined ? `The ${field} field is required.` : `The ${field} field must be an array.`,
    })
    .max(BATCH_SIZE, `The ${field} field must not have more than ${BATCH_SIZE} items.`);

const fullSyncFields = (item?: z.ZodType) => ({
  sync_id: z
    .string({ error: 'The sync_id field must be a string.' })
    .min(1, 'The sync_id field must be at least 1 character.')
    .max(100, 'The sync_id field must not be greater than 100 characters.')
    .optional()
    .meta({
      description:
        'Chosen by the client, new for each sync (a UUID, say); required when done is false. ' +
        'Without it the batch is a whole sync of its own.',
    }),
  items: list('items', item),
  done: z.boolean({ error: 'The done field must be true or false.' }).default(true),
});

const fullSyncBody = z.object(fullSyncFields()).superRefine((body, ctx) => {
  if (!body.done && body.sync_id === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['sync_id'],
      message: 'The sync_id field is required when done is false.',
    });
  }
});

const changedFields = (item?: z.ZodType) => ({
  upserted: list('upserted', item).prefault([]),
  deleted: list('deleted', item ? externalId : undefined).prefault([]),
});

const changedBody = z.object(changedFields());

/** The bodies with the kind's items, for the OpenAPI document. */
export const fullSyncRequest = (spec: KindSpec) => z.object(fullSyncFields(spec.item));
export const changedRequest = (spec: KindSpec) => z.object(changedFields(spec.item));

export interface FullSyncBatch {
  readonly syncId: string | undefined;
  readonly items: Item[];
  readonly done: boolean;
}

export interface ChangedBatch {
  readonly upserted: Item[];
  readonly deleted: string[];
}

/** A full-sync batch, or the 422 naming every bad field and item (`items.3.url`). */
export function parseFullSync(spec: KindSpec, body: unknown): FullSyncBatch {
  const { envelope, errors } = parseEnvelope(fullSyncBody, body);
  const items = checkItems(spec, listIn(body, 'items'), 'items', errors);
  throwIfAny(errors);
  return { syncId: envelope!.sync_id, items, done: envelope!.done };
}

/** An incremental batch: items to upsert and external ids to delete (an id may not be in both). */
export function parseChanged(spec: KindSpec, body: unknown): ChangedBatch {
  const { errors } = parseEnvelope(changedBody, body);
  const upserted = checkItems(spec, listIn(body, 'upserted'), 'upserted', errors);
  const kept = new Set(upserted.map((i) => i.id));
  const deleted: string[] = [];
  listIn(body, 'deleted').forEach((raw, i) => {
    const parsed = externalId.safeParse(raw);
    if (!parsed.success) {
      errors[`deleted.${i}`] = parsed.error.issues.map((issue) => issue.message);
    } else if (kept.has(parsed.data)) {
      errors[`deleted.${i}`] = [`The id "${parsed.data}" is also in upserted.`];
    } else deleted.push(parsed.data);
  });
  throwIfAny(errors);
  return { upserted, deleted };
}

/** The envelope's own errors; its items are checked even when another field is wrong, to report them all at once. */
function parseEnvelope<S extends z.ZodType>(
  schema: S,
  body: unknown,
): { envelope: z.output<S> | undefined; errors: FieldErrors } {
  const parsed = schema.safeParse(body ?? {});
  return parsed.success
    ? { envelope: parsed.data, errors: {} }
    : { envelope: undefined, errors: fieldErrors(parsed.error.issues) };
}

/** The body's list under `field`, when it is one the envelope accepts (else its error is already reported). */
function listIn(body: unknown, field: string): readonly unknown[] {
  const value =
    typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[field] : undefined;
  return Array.isArray(value) && value.length <= BATCH_SIZE ? value : [];
}

/**
 * Validates each item, adding its errors under `<field>.<index>.<item field>`; a later item that
 * repeats an earlier one's id (or unique column) is an error at the later index.
 */
export function checkItems(
  spec: KindSpec,
  raw: readonly unknown[],
  field: string,
  errors: FieldErrors,
): Item[] {
  const items: Item[] = [];
  const firstId = new Map<string, number>();
  const firstUnique = new Map<string, number>();
  raw.forEach((value, index) => {
    const parsed = spec.item.safeParse(value);
    if (!parsed.success) {
      for (const [name, messages] of Object.entries(fieldErrors(parsed.error.issues))) {
        errors[name === '_' ? `${field}.${index}` : `${field}.${index}.${name}`] = messages;
      }
      return;
    }
    const item = parsed.data;
    const earlier = firstId.get(item.id);
    if (earlier !== undefined) {
      errors[`${field}.${index}.id`] = [`The id "${item.id}" was already given at ${field}.${earlier}.`];
      return;
    }
    firstId.set(item.id, index);
    if (spec.uniqueColumn) {
      const key = String(item[spec.uniqueColumn]).toLowerCase();
      const earlierUnique = firstUnique.get(key);
      if (earlierUnique !== undefined) {
        errors[`${field}.${index}.${spec.uniqueColumn}`] = [
          `The ${spec.uniqueColumn} was already given at ${field}.${earlierUnique}.`,
        ];
        return;
      }
      firstUnique.set(key, index);
    }
    items.push(item);
  });
  return items;
}

function throwIfAny(errors: FieldErrors): void {
  if (Object.keys(errors).length > 0) throw HttpError.validation(errors);
}
