import { z } from 'zod';
import { widgetError, type SameKeys, type ServiceDoc } from '../kit/openapi.js';
import type { AppliedCoupon } from './coupons.js';
import { DISCOUNT_TYPES } from '../bulksync/items.js';
import type { LeadRow } from './tables/leads.js';
import type { MessageRow } from './tables/messages.js';
import type { SatisfactionRow } from './tables/ratings.js';

/** The widget's response shapes in the OpenAPI document, held to the rows they are read from. */
export const message = z
  .object({
    id: z.int().meta({
      description:
        'Increasing within the conversation, never reused (a clear keeps counting); the SSE event id ' +
        'and the `after` cursor. Counted per conversation: it tells nothing of other conversations.',
    }),
    sender: z.enum(['visitor', 'agent', 'system']),
    body: z.string(),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'WidgetMessage' });

export const session = z
  .object({
    token: z
      .string()
      .meta({ description: 'The visitor JWT: send it as `Authorization: Bearer` or `X-Widget-Token`.' }),
    token_type: z.literal('Bearer'),
    session_id: z.string().meta({ description: 'The session (JWT claim identity.jwt.sessionClaim, "sid").' }),
    expires_at: z.iso.datetime(),
    resumed: z.boolean().meta({ description: 'Whether the presented token’s session was resumed.' }),
    workspace: z.object({ name: z.string() }),
    website_id: z.int().nullable(),
    conversation: z.object({ messages: z.int(), human_requested: z.boolean() }),
  })
  .meta({ id: 'WidgetSession' });

export const lead = z
  .object({
    id: z.int(),
    name: z.string(),
    email: z.email(),
    message: z.string().nullable(),
    consent: z.literal(true),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'WidgetLead' });

export const satisfaction = z
  .object({ rating: z.int().min(1).max(5), comment: z.string().nullable(), updated_at: z.iso.datetime() })
  .meta({ id: 'WidgetSatisfaction' });

export const coupon = z
  .object({
    code: z.string(),
    discount_type: z.enum(DISCOUNT_TYPES),
    amount: z.number(),
    expires_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'WidgetCoupon' });

const _sameFields: [
  SameKeys<z.output<typeof message>, MessageRow>,
  SameKeys<z.output<typeof lead>, LeadRow & { consent: true }>,
  SameKeys<z.output<typeof satisfaction>, SatisfactionRow>,
  SameKeys<z.output<typeof coupon>, AppliedCoupon>,
] = [true, true, true, true];

export const conversationPage = {
  description: 'One page of messages.',
  schema: z.object({ messages: z.array(message), page: z.int(), per_page: z.int(), total: z.int() }),
};

const invalid = 'Validation failed (`validation_failed`); `fields` names each failing field.';

/** The visitor endpoints' service: its tag, body types, credential and the errors every route can give. */
export const service: ServiceDoc = {
  tag: 'widget',
  bodyTypes: ['application/json', 'application/x-www-form-urlencoded'],
  security: 'visitorToken',
  errors: {
    401: {
      description:
        'No token (`missing_token`), an expired one (`token_expired`), an invalid one or one whose session ' +
        'was erased (`invalid_token`). Through the gateway, a rate-limited route refuses a bad token itself, ' +
        'with code `invalid_token`.',
      schema: widgetError,
    },
    404: { description: 'Not found.', schema: widgetError },
    422: { description: invalid, schema: widgetError },
    429: {
      description:
        'A rate limit of the gateway (`rate_limited`), or what stores (init, messages, events, leads) past ' +
        "the workspace's budget (`workspace_budget_exceeded`), with Retry-After.",
      schema: widgetError,
    },
    507: {
      description: 'The database is full (`storage_full`), with Retry-After; nothing was stored.',
      schema: widgetError,
    },
  },
};
