import { z } from 'zod';
import { optionalString, requiredString } from '../kit/fields.js';
import { documentAs } from '../kit/json-schema.js';

/**
 * Request bodies of the widget endpoints. JSON is the widget's format; form bodies work too, so
 * numbers and booleans are also read from their string spellings. Messages follow Laravel's wording.
 */

const required = (field: string) => `The ${field} field is required.`;

/** A body that is JSON but not an object (an array, a number) fails as a whole. */
const body = <T extends z.core.$ZodLooseShape>(shape: T) =>
  z.object(shape, { error: 'The request body must be a JSON object.' });

/** An integer in [min, max], from a JSON number or a form string. */
export function intField(field: string, min: number, max: number, message?: string) {
  const invalid = message ?? `The ${field} field must be an integer between ${min} and ${max}.`;
  const parse = z
    .union([z.number(), z.string()], {
      error: (issue) => (issue.input === undefined ? required(field) : invalid),
    })
    .transform((v, ctx) => {
      const n = typeof v === 'number' ? v : /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
      if (!Number.isSafeInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: invalid });
        return z.NEVER;
      }
      return n;
    });
  return documentAs(parse, { type: 'integer', minimum: min, maximum: max });
}

const TRUE_VALUES = [true, 1, '1', 'true', 'on', 'yes'] as const;
const FALSE_VALUES = [false, 0, '0', 'false', 'off', 'no'] as const;
const TRUE = new Set<unknown>(TRUE_VALUES);
const FALSE = new Set<unknown>(FALSE_VALUES);

/** A boolean from JSON or its form spellings (1/0, true/false, on/off, yes/no). */
export function boolField(field: string) {
  const parse = z.unknown().transform((v, ctx) => {
    if (TRUE.has(v)) return true;
    if (FALSE.has(v)) return false;
    ctx.addIssue({ code: 'custom', message: `The ${field} field must be true or false.` });
    return z.NEVER;
  });
  return documentAs(parse, { enum: [...TRUE_VALUES, ...FALSE_VALUES] });
}

/** Laravel's "accepted": yes, on, 1 or true. */
function accepted(field: string) {
  const parse = z.unknown().transform((v, ctx) => {
    if (TRUE.has(v)) return true as const;
    ctx.addIssue({ code: 'custom', message: `The ${field} field must be accepted.` });
    return z.NEVER;
  });
  return documentAs(parse, { enum: [...TRUE_VALUES] });
}

export function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol, hostname } = new URL(value);
  return (protocol === 'http:' || protocol === 'https:') && hostname.length > 0;
}

const email = z.email();

export const initBody = body({
  workspace: requiredString('workspace', 100).meta({ description: 'An existing workspace name.' }),
  website_id: intField('website_id', 1, Number.MAX_SAFE_INTEGER, 'The selected website_id is invalid.')
    .nullish()
    .transform((v) => v ?? undefined)
    .meta({ description: 'A website of the workspace’s owner.' }),
  page_url: optionalString('page_url', 2048)
    .refine((v) => v === undefined || isHttpUrl(v), 'The page_url field must be a valid http or https URL.')
    .meta({ format: 'uri', description: 'An http(s) URL.' }),
  locale: optionalString('locale', 35)
    .refine(
      (v) => v === undefined || /^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*$/.test(v),
      'The locale field must be a language tag such as en or en-US.',
    )
    .meta({ examples: ['en', 'en-US'] }),
});

export const MAX_MESSAGE = 4000;

export const messageBody = body({
  body: requiredString('body', MAX_MESSAGE).meta({ description: 'Trimmed.' }),
});

/** A message id: a cursor (the messages after it). */
const afterField = () =>
  intField('after', 0, Number.MAX_SAFE_INTEGER, 'The after field must be a message id.');

export const streamBody = body({
  after: afterField().optional().meta({ description: 'Deliver messages with a greater id.' }),
});

const pageFields = {
  page: intField('page', 1, 1_000_000, 'The page field must be a positive integer.').prefault(1),
  per_page: intField('per_page', 1, 100).prefault(50),
};

export const conversationPageBody = body({
  after: afterField()
    .prefault(0)
    .meta({ description: 'Only the messages with a greater id (the poll of the original widget).' }),
  ...pageFields,
});

/** A page of one of the owner's lists (conversations, events, leads). */
export const ownerPageQuery = body(pageFields);

/** The events a widget reports. */
export const EVENT_TYPES = [
  'open',
  'close',
  'minimize',
  'page_view',
  'message_seen',
  'launcher_shown',
  'lead_form_shown',
  'coupon_shown',
] as const;

export const MAX_EVENTS = 100;
/** Bytes of an event's `data` once serialised. */
export const MAX_EVENT_DATA = 4096;
/** Levels of objects and arrays in an event's `data`, itself the first. */
export const MAX_EVENT_DATA_DEPTH = 32;

/**
 * How deeply `value` nests objects and arrays, counted without recursion and given up once past
 * `limit`: a body of nested brackets parses fine but would overflow the stack of JSON.stringify.
 */
export function nestingDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (typeof node !== 'object' || node === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > limit) return deepest;
    for (const child of Object.values(node)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/** The serialised size of `data`, or Infinity when it cannot be serialised. */
function serialisedBytes(data: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(data));
  } catch {
    return Infinity;
  }
}

const event = z.object(
  {
    type: z.enum(EVENT_TYPES, {
      error: (issue) => (issue.input === undefined ? required('type') : 'The selected type is invalid.'),
    }),
    occurred_at: z.iso
      .datetime({ offset: true, error: 'The occurred_at field must be an ISO-8601 date-time.' })
      .optional()
      .meta({ description: 'Default: when received.' }),
    data: z
      .record(z.string(), z.unknown(), { error: 'The data field must be an object.' })
      .superRefine((d, ctx) => {
        // The depth first: JSON.stringify of deeper data may throw (a RangeError: the stack).
        if (nestingDepth(d, MAX_EVENT_DATA_DEPTH) > MAX_EVENT_DATA_DEPTH) {
          ctx.addIssue({
            code: 'custom',
            message: `The data field must not nest objects and arrays more than ${MAX_EVENT_DATA_DEPTH} levels deep.`,
          });
        } else if (serialisedBytes(d) > MAX_EVENT_DATA) {
          ctx.addIssue({
            code: 'custom',
            message: `The data field must not be greater than ${MAX_EVENT_DATA} bytes.`,
          });
        }
      })
      .optional()
      .meta({
        description: `At most ${MAX_EVENT_DATA} bytes as JSON, and objects and arrays at most ${MAX_EVENT_DATA_DEPTH} levels deep (itself the first).`,
      }),
  },
  { error: 'Each event must be an object.' },
);

export const eventsBody = body({
  events: z
    .array(event, {
      error: (issue) =>
        issue.input === undefined ? required('events') : 'The events field must be an array.',
    })
    .min(1, required('events'))
    .max(MAX_EVENTS, `The events field must not have more than ${MAX_EVENTS} items.`),
});

export const leadBody = body({
  name: requiredString('name', 200),
  email: requiredString('email', 254)
    .refine((v) => email.safeParse(v).success, 'The email field must be a valid email address.')
    .meta({ format: 'email' }),
  message: optionalString('message', MAX_MESSAGE),
  consent: accepted('consent').meta({
    description: 'Must be accepted: true, 1, "1", "true", "on" or "yes".',
  }),
});

export const typingBody = body({ typing: boolField('typing').prefault(true) });

export const satisfactionBody = body({
  rating: intField('rating', 1, 5),
  comment: optionalString('comment', 2000),
});

export const couponBody = body({ code: requiredString('code', 100) });
