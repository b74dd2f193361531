import { z } from 'zod';
import { describeRoutes, type OpenApiFragment, type RouteDoc } from '../kit/openapi.js';
import {
  conversationPageBody,
  couponBody,
  eventsBody,
  initBody,
  leadBody,
  MAX_EVENTS,
  messageBody,
  satisfactionBody,
  streamBody,
  typingBody,
} from './schemas.js';
import { conversationPage, coupon, lead, message, satisfaction, service, session } from './openapi-shapes.js';
import { HUMAN_NOTICE } from './routes.js';
import { inboxService, widgetInboxRouteDocs } from './inbox/openapi.js';

/** The widget's part of the OpenAPI 3.1 document. Keep its paths and methods identical to routes.ts. */
/** A visitor endpoint: its answers, and the token and limit errors every one of them can give. */
const visitor = (route: Omit<RouteDoc, 'errors'>, errors: RouteDoc['errors'] = []): RouteDoc => ({
  ...route,
  errors: [...errors, 401, 429],
});

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
