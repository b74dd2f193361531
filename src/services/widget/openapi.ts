import type { OpenApiFragment } from '../openapi.js';
import { HUMAN_NOTICE } from './routes.js';
import { EVENT_TYPES, MAX_EVENT_DATA, MAX_EVENT_DATA_DEPTH, MAX_EVENTS, MAX_MESSAGE } from './schemas.js';

/** The widget's part of the OpenAPI 3.1 document. Keep its paths and methods identical to routes.ts. */

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object) => ({ content: { 'application/json': { schema } } });
const error = (description: string) => ({ description, ...json(ref('WidgetError')) });

const body = (properties: Record<string, object>, required: string[] = []) => ({
  required: required.length > 0,
  content: {
    'application/json': { schema: { type: 'object', required, properties } },
    'application/x-www-form-urlencoded': { schema: { type: 'object', required, properties } },
  },
});

/** The errors every visitor endpoint can answer with. */
const visitorErrors = {
  '401': error(
    'No token (`missing_token`), an expired one (`token_expired`), an invalid one or one whose session ' +
      'was erased (`invalid_token`). Through the gateway, a rate-limited route refuses a bad token itself, ' +
      'with code `invalid_token`.',
  ),
  '429': error('A rate limit of the gateway (`rate_limited`), with Retry-After.'),
};
const invalid = error('Validation failed (`validation_failed`); `fields` names each failing field.');

function operation(
  summary: string,
  description: string,
  responses: Record<string, object>,
  requestBody?: object,
): object {
  return {
    tags: ['widget'],
    summary,
    description,
    security: [{ visitorToken: [] }],
    ...(requestBody ? { requestBody } : {}),
    responses: { ...responses, ...visitorErrors },
  };
}

const schemas: Record<string, unknown> = {
  WidgetMessage: {
    type: 'object',
    required: ['id', 'sender', 'body', 'created_at'],
    properties: {
      id: { type: 'integer', description: 'Increasing within the conversation; the SSE event id.' },
      sender: { enum: ['visitor', 'agent', 'system'] },
      body: { type: 'string' },
      created_at: { type: 'string', format: 'date-time' },
    },
  },
  WidgetSession: {
    type: 'object',
    required: [
      'token',
      'token_type',
      'session_id',
      'expires_at',
      'resumed',
      'workspace',
      'website_id',
      'conversation',
    ],
    properties: {
      token: {
        type: 'string',
        description: 'The visitor JWT: send it as `Authorization: Bearer` or `X-Widget-Token`.',
      },
      token_type: { const: 'Bearer' },
      session_id: {
        type: 'string',
        description: 'The session (JWT claim identity.jwt.sessionClaim, "sid").',
      },
      expires_at: { type: 'string', format: 'date-time' },
      resumed: { type: 'boolean', description: 'Whether the presented token’s session was resumed.' },
      workspace: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
      website_id: { type: ['integer', 'null'] },
      conversation: {
        type: 'object',
        required: ['messages', 'human_requested'],
        properties: { messages: { type: 'integer' }, human_requested: { type: 'boolean' } },
      },
    },
  },
  WidgetLead: {
    type: 'object',
    required: ['id', 'name', 'email', 'message', 'consent', 'created_at'],
    properties: {
      id: { type: 'integer' },
      name: { type: 'string' },
      email: { type: 'string', format: 'email' },
      message: { type: ['string', 'null'] },
      consent: { const: true },
      created_at: { type: 'string', format: 'date-time' },
    },
  },
  WidgetSatisfaction: {
    type: 'object',
    required: ['rating', 'comment', 'updated_at'],
    properties: {
      rating: { type: 'integer', minimum: 1, maximum: 5 },
      comment: { type: ['string', 'null'] },
      updated_at: { type: 'string', format: 'date-time' },
    },
  },
  WidgetCoupon: {
    type: 'object',
    required: ['code', 'discount_type', 'amount', 'expires_at'],
    properties: {
      code: { type: 'string' },
      discount_type: { enum: ['percent', 'fixed'] },
      amount: { type: 'number' },
      expires_at: { type: ['string', 'null'], format: 'date-time' },
    },
  },
};

const message = { type: 'object', required: ['message'], properties: { message: ref('WidgetMessage') } };

const conversationPageFields = {
  page: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1 },
  per_page: { type: 'integer', minimum: 1, maximum: 100, default: 50 },
};
const conversationPage = {
  description: 'One page of messages.',
  ...json({
    type: 'object',
    required: ['messages', 'page', 'per_page', 'total'],
    properties: {
      messages: { type: 'array', items: ref('WidgetMessage') },
      page: { type: 'integer' },
      per_page: { type: 'integer' },
      total: { type: 'integer' },
    },
  }),
};

export const widgetOpenApi: OpenApiFragment = {
  schemas,
  paths: {
    '/api/v1/widget/init': {
      post: {
        tags: ['widget'],
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
        requestBody: body(
          {
            workspace: { type: 'string', maxLength: 100, description: 'An existing workspace name.' },
            website_id: { type: 'integer', description: 'A website of the workspace’s owner.' },
            page_url: { type: 'string', format: 'uri', maxLength: 2048, description: 'An http(s) URL.' },
            locale: { type: 'string', maxLength: 35, examples: ['en', 'en-US'] },
          },
          ['workspace'],
        ),
        responses: {
          '200': { description: 'The session and its token.', ...json(ref('WidgetSession')) },
          '422': error(
            '`workspace` does not exist, `website_id` is not a website of its owner, or a field is ' +
              'malformed (`validation_failed`).',
          ),
          '429': error('The widget-init limit of the gateway (`rate_limited`).'),
        },
      },
    },
    '/api/v1/widget/messages': {
      post: operation(
        'Send a visitor message',
        'Stores the message in the session’s conversation; open streams deliver it.',
        { '201': { description: 'The stored message.', ...json(message) }, '422': invalid },
        body({ body: { type: 'string', minLength: 1, maxLength: MAX_MESSAGE, description: 'Trimmed.' } }, [
          'body',
        ]),
      ),
    },
    '/api/v1/widget/messages/stream': {
      post: operation(
        'Stream the conversation (Server-Sent Events)',
        'Answers `text/event-stream`: one `event: message` per message stored after the cursor, with ' +
          '`id: <message id>` and the WidgetMessage as JSON `data`, as messages are stored (also by other ' +
          'gateway workers). The cursor is the `Last-Event-ID` header, else `after`, else the latest ' +
          'message (only new ones). A `: ping` comment comes every 15 s. The stream ends when the client ' +
          'leaves or the session is erased.',
        {
          '200': {
            description: 'The event stream.',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          '422': invalid,
        },
        body({ after: { type: 'integer', minimum: 0, description: 'Deliver messages with a greater id.' } }),
      ),
    },
    '/api/v1/widget/conversation/messages': {
      get: {
        ...operation(
          'List the conversation (query string)',
          'The same page as the POST form, with `page` and `per_page` in the query string: the ' +
            'original widget polls the conversation this way.',
          { '200': conversationPage, '422': invalid },
        ),
        parameters: [
          { name: 'page', in: 'query', schema: conversationPageFields.page },
          { name: 'per_page', in: 'query', schema: conversationPageFields.per_page },
        ],
      },
      post: operation(
        'List the conversation',
        'The session’s messages, oldest first, a page at a time.',
        { '200': conversationPage, '422': invalid },
        body(conversationPageFields),
      ),
    },
    '/api/v1/widget/conversation/clear': {
      post: operation(
        'Clear the conversation',
        'Deletes the session’s messages and its request for a human (the rating stays).',
        {
          '200': {
            description: 'How many messages were deleted.',
            ...json({ type: 'object', required: ['cleared'], properties: { cleared: { type: 'integer' } } }),
          },
        },
      ),
    },
    '/api/v1/widget/request-human': {
      post: operation(
        'Ask for a human',
        `Marks the conversation for a human. The first request stores the system message "${HUMAN_NOTICE}", ` +
          'which open streams deliver; repeating it changes nothing (`message` is then null).',
        {
          '200': {
            description: 'The conversation’s state, and the notice stored now.',
            ...json({
              type: 'object',
              required: ['conversation', 'message'],
              properties: {
                conversation: {
                  type: 'object',
                  required: ['human_requested', 'human_requested_at'],
                  properties: {
                    human_requested: { const: true },
                    human_requested_at: { type: 'string', format: 'date-time' },
                  },
                },
                message: { oneOf: [ref('WidgetMessage'), { type: 'null' }] },
              },
            }),
          },
        },
      ),
    },
    '/api/v1/widget/events': {
      post: operation(
        'Record widget events',
        `A batch of 1 to ${MAX_EVENTS} events. A bad item fails the batch, named by index (\`events.3.type\`).`,
        {
          '202': {
            description: 'The events were recorded.',
            ...json({
              type: 'object',
              required: ['accepted'],
              properties: { accepted: { type: 'integer' } },
            }),
          },
          '422': invalid,
        },
        {
          required: true,
          ...json({
            type: 'object',
            required: ['events'],
            properties: {
              events: {
                type: 'array',
                minItems: 1,
                maxItems: MAX_EVENTS,
                items: {
                  type: 'object',
                  required: ['type'],
                  properties: {
                    type: { enum: [...EVENT_TYPES] },
                    occurred_at: {
                      type: 'string',
                      format: 'date-time',
                      description: 'Default: when received.',
                    },
                    data: {
                      type: 'object',
                      description: `At most ${MAX_EVENT_DATA} bytes as JSON, and objects and arrays at most ${MAX_EVENT_DATA_DEPTH} levels deep (itself the first).`,
                    },
                  },
                },
              },
            },
          }),
        },
      ),
    },
    '/api/v1/widget/me': {
      delete: operation(
        'Erase the visitor',
        'Deletes the session with its messages, events, leads and rating. Its token stops working (401).',
        {
          '200': {
            description: 'Erased.',
            ...json({ type: 'object', required: ['erased'], properties: { erased: { const: true } } }),
          },
        },
      ),
    },
    '/api/v1/widget/leads': {
      post: operation(
        'Leave contact details',
        'Stores a lead of the session (with the session’s page URL).',
        {
          '201': {
            description: 'The stored lead.',
            ...json({ type: 'object', required: ['lead'], properties: { lead: ref('WidgetLead') } }),
          },
          '422': invalid,
        },
        body(
          {
            name: { type: 'string', minLength: 1, maxLength: 200 },
            email: { type: 'string', format: 'email', maxLength: 254 },
            message: { type: 'string', maxLength: MAX_MESSAGE },
            consent: {
              description: 'Must be accepted: true, 1, "yes" or "on".',
              enum: [true, 1, '1', 'true', 'yes', 'on'],
            },
          },
          ['name', 'email', 'consent'],
        ),
      ),
    },
    '/api/v1/widget/typing': {
      post: operation(
        'Typing indicator',
        'Records whether the visitor is typing.',
        { '204': { description: 'Recorded.' }, '422': invalid },
        body({ typing: { type: 'boolean', default: true } }),
      ),
    },
    '/api/v1/widget/satisfaction': {
      post: operation(
        'Rate the conversation',
        'One rating per session: the latest replaces the previous one.',
        {
          '200': {
            description: 'The rating kept.',
            ...json({
              type: 'object',
              required: ['satisfaction'],
              properties: { satisfaction: ref('WidgetSatisfaction') },
            }),
          },
          '422': invalid,
        },
        body(
          {
            rating: { type: 'integer', minimum: 1, maximum: 5 },
            comment: { type: 'string', maxLength: 2000 },
          },
          ['rating'],
        ),
      ),
    },
    '/api/v1/widget/coupon/apply': {
      post: operation(
        'Check a coupon code',
        'Checks the code (case-insensitive) against the coupons synced for the session’s workspace. ' +
          'Nothing is redeemed: the shop counts usage and syncs usage_count.',
        {
          '200': {
            description: 'The discount.',
            ...json({ type: 'object', required: ['coupon'], properties: { coupon: ref('WidgetCoupon') } }),
          },
          '404': error('No coupon with this code in the workspace (`coupon_not_found`).'),
          '422': error(
            'Expired (`coupon_expired`), used up (`coupon_usage_limit_reached`), or no code (`validation_failed`).',
          ),
        },
        body({ code: { type: 'string', minLength: 1, maxLength: 100 } }, ['code']),
      ),
    },
  },
};
