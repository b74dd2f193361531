import { z } from 'zod';
import {
  describeRoutes,
  widgetError,
  type OpenApiFragment,
  type RouteDoc,
  type ServiceDoc,
  type SameKeys,
} from '../kit/openapi.js';
import type { AppliedCoupon } from './coupons.js';
import { DISCOUNT_TYPES } from '../bulksync/items.js';
import type { OwnerLeadRow } from './tables/leads.js';
import { INBOX_PATHS } from './inbox/api.js';
import type { Conversation, WidgetEvent } from './inbox/inbox.js';
import { HUMAN_NOTICE } from './routes.js';
import {
  conversationPageBody,
  couponBody,
  eventsBody,
  initBody,
  leadBody,
  MAX_EVENTS,
  messageBody,
  ownerPageQuery,
  satisfactionBody,
  streamBody,
  typingBody,
} from './schemas.js';
import type { LeadRow } from './tables/leads.js';
import type { MessageRow } from './tables/messages.js';
import type { SatisfactionRow } from './tables/ratings.js';

/** The widget's part of the OpenAPI 3.1 document. Keep its paths and methods identical to routes.ts. */

const message = z
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

const session = z
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

const lead = z
  .object({
    id: z.int(),
    name: z.string(),
    email: z.email(),
    message: z.string().nullable(),
    consent: z.literal(true),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'WidgetLead' });

const satisfaction = z
  .object({ rating: z.int().min(1).max(5), comment: z.string().nullable(), updated_at: z.iso.datetime() })
  .meta({ id: 'WidgetSatisfaction' });

const coupon = z
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

const conversationPage = {
  description: 'One page of messages.',
  schema: z.object({ messages: z.array(message), page: z.int(), per_page: z.int(), total: z.int() }),
};

const invalid = 'Validation failed (`validation_failed`); `fields` names each failing field.';

/** A visitor endpoint: its answers, and the token and limit errors every one of them can give. */
const visitor = (route: Omit<RouteDoc, 'errors'>, errors: RouteDoc['errors'] = []): RouteDoc => ({
  ...route,
  errors: [...errors, 401, 429],
});

const service: ServiceDoc = {
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

/** The routes, for the OpenAPI document (and the tests that check it against the validators). */
export const widgetRouteDocs: readonly RouteDoc[] = [
  {
    method: 'post',
    path: '/api/v1/widget/init',
    summary: 'Start or resume a visitor session',
    description:
      'Issues the visitor-session JWT (HS256 by default, signed with identity.jwt: WIDGET_JWT_SECRET, ' +
      'else a secret generated once under DATA_DIR; lifetime identity.jwt.ttl, 24 h by default). ' +
      '**The workspace is named by its name** (`workspace`), a public key like a site key: the ' +
      'workspace created by `tollgate tokens create --workspace NAME [--user ID]` (or ' +
      'BOOTSTRAP_WORKSPACE), which also owns the coupons its shop syncs through /v1/wp/*. Each ' +
      'workspace belongs to a user of the websites API. `website_id` attributes the session to one ' +
      'of that user’s websites; it does not choose the workspace. Any other id (another owner’s, ' +
      'a deleted or a never-existing one) gets the same 422, word for word. ' +
      'A still-valid token of the same workspace, sent with init, resumes its session with a fresh ' +
      'token; an expired, invalid or other workspace’s token starts a new session.',
    public: true,
    body: initBody,
    answers: { 200: { description: 'The session and its token.', schema: session } },
    errors: [
      [
        422,
        '`workspace` does not exist, `website_id` is not a website of its owner, or a field is ' +
          'malformed (`validation_failed`).',
      ],
      [
        429,
        'The widget-init or widget-sessions-ip limit of the gateway (`rate_limited`), or the workspace’s ' +
          'budget of new sessions (`workspace_budget_exceeded`).',
      ],
      507,
    ],
  },
  visitor(
    {
      method: 'post',
      path: '/api/v1/widget/messages',
      summary: 'Send a visitor message',
      description: 'Stores the message in the session’s conversation; open streams deliver it.',
      body: messageBody,
      answers: { 201: { description: 'The stored message.', schema: z.object({ message }) } },
    },
    [422, 507],
  ),
  visitor(
    {
      method: 'post',
      path: '/api/v1/widget/messages/stream',
      summary: 'Stream the conversation (Server-Sent Events)',
      description:
        'Answers `text/event-stream`: one `event: message` per message stored after the cursor, with ' +
        '`id: <message id>` and the WidgetMessage as JSON `data`, as messages are stored (also by other ' +
        'gateway workers). The cursor is the `Last-Event-ID` header, else `after`, else the latest ' +
        'message (only new ones). A `: ping` comment comes every 15 s. The stream ends when the client ' +
        'leaves or the session is erased.',
      body: streamBody,
      answers: { 200: { description: 'The event stream.', contentType: 'text/event-stream' } },
    },
    [422],
  ),
  visitor(
    {
      method: 'post',
      path: '/api/v1/widget/conversation/messages',
      summary: 'List the conversation',
      description:
        'The session’s messages, oldest first, a page at a time. With `after`, only the messages with ' +
        'a greater id (`total` counts those): the widget polls with the id of the last message it shows.',
      body: conversationPageBody,
      answers: { 200: conversationPage },
    },
    [422],
  ),
  visitor(
    {
      method: 'get',
      path: '/api/v1/widget/conversation/messages',
      summary: 'List the conversation (query string)',
      description:
        'The same page as the POST form, with `after`, `page` and `per_page` in the query string: the ' +
        'original widget polls the conversation this way (`?after=<id of the last message shown>`), ' +
        'getting only the new messages, oldest first.',
      query: conversationPageBody,
      answers: { 200: conversationPage },
    },
    [422],
  ),
  visitor({
    method: 'post',
    path: '/api/v1/widget/conversation/clear',
    summary: 'Clear the conversation',
    description: 'Deletes the session’s messages and its request for a human (the rating stays).',
    answers: {
      200: { description: 'How many messages were deleted.', schema: z.object({ cleared: z.int() }) },
    },
  }),
  visitor({
    method: 'post',
    path: '/api/v1/widget/request-human',
    summary: 'Ask for a human',
    description:
      `Marks the conversation for a human. The first request stores the system message "${HUMAN_NOTICE}", ` +
      'which open streams deliver; repeating it changes nothing (`message` is then null).',
    answers: {
      200: {
        description: 'The conversation’s state, and the notice stored now.',
        schema: z.object({
          conversation: z.object({
            human_requested: z.literal(true),
            human_requested_at: z.iso.datetime(),
          }),
          message: message.nullable(),
        }),
      },
    },
  }),
  visitor(
    {
      method: 'post',
      path: '/api/v1/widget/events',
      summary: 'Record widget events',
      description: `A batch of 1 to ${MAX_EVENTS} events. A bad item fails the batch, named by index (\`events.3.type\`).`,
      body: eventsBody,
      bodyTypes: ['application/json'],
      answers: {
        202: { description: 'The events were recorded.', schema: z.object({ accepted: z.int() }) },
      },
    },
    [422, 507],
  ),
  visitor({
    method: 'delete',
    path: '/api/v1/widget/me',
    summary: 'Erase the visitor',
    description:
      'Deletes the session with its messages, events, leads and rating. Its token stops working (401).',
    answers: { 200: { description: 'Erased.', schema: z.object({ erased: z.literal(true) }) } },
  }),
  visitor(
    {
      method: 'post',
      path: '/api/v1/widget/leads',
      summary: 'Leave contact details',
      description: 'Stores a lead of the session (with the session’s page URL).',
      body: leadBody,
      answers: { 201: { description: 'The stored lead.', schema: z.object({ lead }) } },
    },
    [422, 507],
  ),
  visitor(
    {
      method: 'post',
      path: '/api/v1/widget/typing',
      summary: 'Typing indicator',
      description: 'Records whether the visitor is typing.',
      body: typingBody,
      answers: { 204: { description: 'Recorded.' } },
    },
    [422],
  ),
  visitor(
    {
      method: 'post',
      path: '/api/v1/widget/satisfaction',
      summary: 'Rate the conversation',
      description: 'One rating per session: the latest replaces the previous one.',
      body: satisfactionBody,
      answers: { 200: { description: 'The rating kept.', schema: z.object({ satisfaction }) } },
    },
    [422],
  ),
  visitor(
    {
      method: 'post',
      path: '/api/v1/widget/coupon/apply',
      summary: 'Check a coupon code',
      description:
        'Checks the code (case-insensitive) against the coupons synced for the session’s workspace. ' +
        'Nothing is redeemed: the shop counts usage and syncs usage_count.',
      body: couponBody,
      answers: { 200: { description: 'The discount.', schema: z.object({ coupon }) } },
    },
    [
      [404, 'No coupon with this code in the workspace (`coupon_not_found`).'],
      [
        422,
        'Expired (`coupon_expired`), used up (`coupon_usage_limit_reached`), or no code (`validation_failed`).',
      ],
    ],
  ),
];

const conversation = z
  .object({
    id: z.string().meta({ description: 'The visitor session’s id.' }),
    website_id: z.int().nullable(),
    page_url: z.string().nullable(),
    locale: z.string().nullable(),
    started_at: z.iso.datetime(),
    last_message_at: z.iso.datetime().nullable().meta({ description: 'Null: no message yet.' }),
    human_requested_at: z.iso.datetime().nullable(),
    messages: z.int(),
    unread: z.int().meta({ description: 'Visitor messages the owner has not read (API or page).' }),
    last_message: z.object({ sender: z.enum(['visitor', 'agent', 'system']), body: z.string() }).nullable(),
    rating: z.int().min(1).max(5).nullable(),
  })
  .meta({ id: 'WidgetConversation' });

const ownerLead = z
  .object({
    id: z.int(),
    conversation_id: z.string(),
    name: z.string(),
    email: z.string(),
    message: z.string().nullable(),
    page_url: z.string().nullable(),
    consent_at: z.iso.datetime(),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'WidgetOwnerLead' });

const widgetEvent = z
  .object({
    id: z.int(),
    type: z.string(),
    occurred_at: z.iso.datetime(),
    data: z.record(z.string(), z.unknown()).nullable(),
    received_at: z.iso.datetime(),
  })
  .meta({ id: 'WidgetEvent' });

const _sameOwnerFields: [
  SameKeys<z.output<typeof conversation>, Conversation>,
  SameKeys<z.output<typeof ownerLead>, OwnerLeadRow>,
  SameKeys<z.output<typeof widgetEvent>, WidgetEvent>,
] = [true, true, true];

const inboxService: ServiceDoc = {
  ...service,
  tag: 'widget inbox',
  security: 'apiKey',
  errors: {
    ...service.errors,
    401: {
      description: 'No API key, or an unknown one (`unauthenticated`).',
      schema: widgetError,
    },
    404: {
      description:
        'No such workspace, one of another owner, or no such conversation in it (`not_found`): all alike.',
      schema: widgetError,
    },
    429: { description: 'A rate limit of the gateway (`rate_limited`).', schema: widgetError },
  },
  note: 'The workspace’s owner only, with their API key (the websites API’s).',
};

const workspaceParam = z.object({ workspace: z.string().meta({ description: 'The workspace’s name.' }) });
const conversationParams = workspaceParam.extend({
  conversation: z.string().meta({ description: 'The conversation’s id (the visitor session’s).' }),
});

/** A GET of one page of the inbox's `name` (the owner's page query), as `{ name: [...], page, per_page, total }`. */
const pageDoc = (
  path: string,
  summary: string,
  description: string,
  params: z.ZodObject,
  name: string,
  item: z.ZodType,
): RouteDoc => ({
  method: 'get',
  path,
  summary,
  description,
  params,
  query: ownerPageQuery,
  answers: {
    200: {
      description: 'One page.',
      schema: z.object({ [name]: z.array(item), page: z.int(), per_page: z.int(), total: z.int() }),
    },
  },
  errors: [401, 404, 422, 429],
});

/** The owner's inbox: their API key, the workspace named in the path. */
export const widgetInboxRouteDocs: readonly RouteDoc[] = [
  pageDoc(
    INBOX_PATHS.conversations,
    'List the conversations',
    'The workspace’s conversations (visitor sessions with a message), newest activity first, with ' +
      'their unread counts.',
    workspaceParam,
    'conversations',
    conversation,
  ),
  {
    method: 'get',
    path: INBOX_PATHS.conversation,
    summary: 'Read a conversation',
    description: 'The conversation, its rating and its leads.',
    params: conversationParams,
    answers: {
      200: {
        description: 'The conversation.',
        schema: z.object({
          conversation,
          satisfaction: satisfaction.nullable(),
          leads: z.array(ownerLead),
        }),
      },
    },
    errors: [401, 404, 429],
  },
  {
    method: 'get',
    path: INBOX_PATHS.messages,
    summary: 'Read the messages',
    description:
      'The messages, oldest first, a page at a time; `after` as in the visitor’s poll. The messages ' +
      'answered count as read (`unread`).',
    params: conversationParams,
    query: conversationPageBody,
    answers: { 200: conversationPage },
    errors: [401, 404, 422, 429],
  },
  {
    method: 'post',
    path: INBOX_PATHS.messages,
    summary: 'Reply as an agent',
    description:
      'Stores an `agent` message. The visitor’s open streams deliver it at once, and their poll ' +
      '(`after`) finds it. Everything before it counts as read.',
    params: conversationParams,
    body: messageBody,
    answers: { 201: { description: 'The stored message.', schema: z.object({ message }) } },
    errors: [401, 404, 422, 429, 507],
  },
  pageDoc(
    INBOX_PATHS.events,
    'Read the widget events',
    'The events the visitor’s widget reported, in the order received.',
    conversationParams,
    'events',
    widgetEvent,
  ),
  pageDoc(
    INBOX_PATHS.leads,
    'List the leads',
    'The workspace’s leads, newest first.',
    workspaceParam,
    'leads',
    ownerLead,
  ),
  {
    method: 'get',
    path: INBOX_PATHS.leadsCsv,
    summary: 'Export the leads (CSV)',
    description:
      'Every lead, newest first, as CSV (RFC 4180) with a header row: ' +
      'id, created_at, name, email, message, page_url, consent_at, conversation_id. A field a ' +
      "spreadsheet would read as a formula (starting with =, +, -, @, tab or CR) gets a leading `'`.",
    params: workspaceParam,
    answers: { 200: { description: 'The leads.', contentType: 'text/csv' } },
    errors: [401, 404, 429],
  },
];

const visitorFragment = describeRoutes(service, widgetRouteDocs);
const inboxFragment = describeRoutes(inboxService, widgetInboxRouteDocs);

/** Both parts: the visitor's endpoints and the owner's inbox (paths of their own). */
export const widgetOpenApi: OpenApiFragment = {
  get paths() {
    return { ...visitorFragment.paths, ...inboxFragment.paths };
  },
  get schemas() {
    return { ...visitorFragment.schemas, ...inboxFragment.schemas };
  },
};
