import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../../db/database.js';
import { workspacesOf } from '../../accounts/workspaces.js';
import { HttpError } from '../../kit/errors.js';
import { PAGE_ROUTE } from '../../pages/assets.js';
import { LOGIN_PATH, notFoundPage, sendPage } from '../../pages/layout.js';
import { checkOrigin, type PageSessions } from '../../pages/session.js';
import { countMessages } from '../tables/messages.js';
import { MAX_MESSAGE } from '../schemas.js';
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
import {
  conversationPage,
  conversationPath,
  conversationsPage,
  INBOX_PATH,
  workspacesPage,
} from './page-view.js';

type InboxRequest = FastifyRequest<{
  Params: { workspace: string; conversation: string };
  Querystring: Record<string, unknown>;
  Body: Record<string, unknown> | undefined;
}>;

const LIST_SIZE = 25;
const MESSAGES_SHOWN = 100;
const EVENTS_SHOWN = 50;

const pageParam = (value: unknown) => {
  const n = typeof value === 'string' && /^\d{1,7}$/.test(value) ? Number(value) : 1;
  return Math.max(n, 1);
};

/**
 * The owner's inbox page, beside the statistics pages and signed in as they are (/_/login): the
 * workspaces, a workspace's conversations and leads, one conversation with its reply form. HTML
 * forms only, no script; a reply reaches the visitor's stream and poll at once.
 */
export function registerInboxPage(
  app: FastifyInstance,
  db: Db,
  sessions: PageSessions,
  notifier: MessageNotifier,
): void {
  /** The signed-in owner, or undefined once it has sent them to sign in. */
  const owner = (request: FastifyRequest, reply: FastifyReply): number | undefined => {
    const viewer = sessions.viewer(request);
    if (viewer === undefined) {
      void reply.redirect(`${LOGIN_PATH}?next=${encodeURIComponent(request.url)}`, 303);
    }
    return viewer;
  };
  /** Another owner's workspace or conversation, and a missing one, get the same 404 page. */
  const guard = async (reply: FastifyReply, here: string, show: () => Promise<unknown> | unknown) => {
    try {
      return await show();
    } catch (err) {
      if (err instanceof HttpError && err.status === 404)
        return sendPage(reply, 404, notFoundPage(true, here));
      throw err;
    }
  };

  app.get(INBOX_PATH, PAGE_ROUTE, async (request, reply) => {
    const user = owner(request, reply);
    if (user === undefined) return reply;
    return sendPage(reply, 200, workspacesPage(workspacesOf(db, user)));
  });

  app.get(`${INBOX_PATH}/:workspace`, PAGE_ROUTE, async (request: InboxRequest, reply) => {
    const user = owner(request, reply);
    if (user === undefined) return reply;
    return guard(reply, request.url, () => {
      const workspace = ownedWorkspace(db, request.params.workspace, user);
      const conversations = listConversations(db, workspace.id, pageParam(request.query.page), LIST_SIZE);
      const leads = listLeads(db, workspace.id, pageParam(request.query.leads_page), LIST_SIZE);
      return sendPage(reply, 200, conversationsPage(workspace.name, conversations, leads));
    });
  });

  app.get(`${INBOX_PATH}/:workspace/leads.csv`, PAGE_ROUTE, async (request: InboxRequest, reply) => {
    const user = owner(request, reply);
    if (user === undefined) return reply;
    return guard(reply, request.url, () => {
      const workspace = ownedWorkspace(db, request.params.workspace, user);
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="leads.csv"')
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'no-store')
        .send(Readable.from(leadsCsv(db, workspace.id)));
    });
  });

  const showConversation = (
    reply: FastifyReply,
    user: number,
    params: InboxRequest['params'],
    status = 200,
    error?: string,
  ) => {
    const workspace = ownedWorkspace(db, params.workspace, user);
    const id = params.conversation;
    const detail = conversationDetail(db, workspace.id, id);
    // The latest messages: the last page of them; reading them marks them read.
    const last = Math.max(1, Math.ceil(countMessages(db, id) / MESSAGES_SHOWN));
    const messages = readMessages(db, workspace.id, id, 0, last, MESSAGES_SHOWN);
    const events = listEvents(db, workspace.id, id, 1, EVENTS_SHOWN);
    return sendPage(
      reply,
      status,
      conversationPage({ workspace: workspace.name, ...detail, messages, events, error }),
    );
  };

  app.get(`${INBOX_PATH}/:workspace/:conversation`, PAGE_ROUTE, async (request: InboxRequest, reply) => {
    const user = owner(request, reply);
    if (user === undefined) return reply;
    return guard(reply, request.url, () => showConversation(reply, user, request.params));
  });

  app.post(
    `${INBOX_PATH}/:workspace/:conversation/reply`,
    PAGE_ROUTE,
    async (request: InboxRequest, reply) => {
      if (!checkOrigin(request, reply)) return reply;
      const user = owner(request, reply);
      if (user === undefined) return reply;
      const { workspace, conversation } = request.params;
      return guard(reply, request.url, () => {
        const raw = request.body?.body;
        const body = typeof raw === 'string' ? raw.trim() : '';
        if (body === '' || body.length > MAX_MESSAGE) {
          const error =
            body === '' ? 'Write a reply first.' : `A reply has at most ${MAX_MESSAGE} characters.`;
          return showConversation(reply, user, request.params, 422, error);
        }
        postReply(db, notifier, ownedWorkspace(db, workspace, user).id, conversation, body);
        return reply.redirect(`${conversationPath(workspace, conversation)}#reply`, 303);
      });
    },
  );
}
