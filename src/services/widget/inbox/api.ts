import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../../../db/database.js';
import { requireApiKey } from '../../accounts/accounts.js';
import { validate } from '../../kit/validate.js';
import { conversationPageBody, messageBody, ownerPageQuery } from '../schemas.js';
import type { MessageNotifier } from '../message-notifier.js';
import {
  conversationDetail,
  leadsCsv,
  listConversations,
  listEvents,
  listLeads,
  ownedWorkspace,
  readMessages,
  postReply,
} from './inbox.js';

/** The paths of the owner's inbox API, in fastify's syntax; openapi.ts lists the same ones. */
export const INBOX_PATHS = {
  conversations: '/api/v1/widget/inbox/:workspace/conversations',
  conversation: '/api/v1/widget/inbox/:workspace/conversations/:conversation',
  messages: '/api/v1/widget/inbox/:workspace/conversations/:conversation/messages',
  events: '/api/v1/widget/inbox/:workspace/conversations/:conversation/events',
  leads: '/api/v1/widget/inbox/:workspace/leads',
  leadsCsv: '/api/v1/widget/inbox/:workspace/leads.csv',
} as const;

type Params = { workspace: string; conversation: string };
type OwnerRequest = FastifyRequest<{ Params: Params }>;

/**
 * The inbox of a workspace's owner, with their API key (as the websites API): conversations,
 * messages, events, ratings, leads, and the agent's reply.
 */
export function registerInboxApi(app: FastifyInstance, db: Db, notifier: MessageNotifier): void {
  requireApiKey(app, db);
  const workspaceOf = (request: OwnerRequest) => ownedWorkspace(db, request.params.workspace, request.userId);
  const query = (request: FastifyRequest) => ({ ...(request.query as object) });
  // No HEAD twins: the documented surface is these GETs.
  const get = { exposeHeadRoute: false } as const;

  app.get(INBOX_PATHS.conversations, get, async (request: OwnerRequest) => {
    const { page, per_page } = validate(ownerPageQuery, query(request));
    const { items, ...rest } = listConversations(db, workspaceOf(request).id, page, per_page);
    return { conversations: items, ...rest };
  });

  app.get(INBOX_PATHS.conversation, get, async (request: OwnerRequest) =>
    conversationDetail(db, workspaceOf(request).id, request.params.conversation),
  );

  app.get(INBOX_PATHS.messages, get, async (request: OwnerRequest) => {
    const { after, page, per_page } = validate(conversationPageBody, query(request));
    const workspace = workspaceOf(request);
    const { items, ...rest } = readMessages(
      db,
      workspace.id,
      request.params.conversation,
      after,
      page,
      per_page,
    );
    return { messages: items, ...rest };
  });

  app.post(INBOX_PATHS.messages, async (request: OwnerRequest, answer) => {
    const workspace = workspaceOf(request);
    const { body } = validate(messageBody, request.body);
    const message = postReply(db, notifier, workspace.id, request.params.conversation, body);
    return answer.status(201).send({ message });
  });

  app.get(INBOX_PATHS.events, get, async (request: OwnerRequest) => {
    const { page, per_page } = validate(ownerPageQuery, query(request));
    const workspace = workspaceOf(request);
    const { items, ...rest } = listEvents(db, workspace.id, request.params.conversation, page, per_page);
    return { events: items, ...rest };
  });

  app.get(INBOX_PATHS.leads, get, async (request: OwnerRequest) => {
    const { page, per_page } = validate(ownerPageQuery, query(request));
    const { items, ...rest } = listLeads(db, workspaceOf(request).id, page, per_page);
    return { leads: items, ...rest };
  });

  app.get(INBOX_PATHS.leadsCsv, get, async (request: OwnerRequest, answer) => {
    const workspace = workspaceOf(request);
    return answer
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="leads.csv"`)
      .header('cache-control', 'no-store')
      .send(Readable.from(leadsCsv(db, workspace.id)));
  });
}
