import { z } from 'zod';
import { widgetError, type RouteDoc, type ServiceDoc, type SameKeys } from '../../kit/openapi.js';
import type { OwnerLeadRow } from '../tables/leads.js';
import { INBOX_PATHS } from './api.js';
import type { Conversation, WidgetEvent } from './inbox.js';
import { conversationPageBody, messageBody, ownerPageQuery } from '../schemas.js';
import { conversationPage, message, satisfaction, service } from '../openapi-shapes.js';

// The owner's inbox part of the widget's OpenAPI document.
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

export const inboxService: ServiceDoc = {
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
