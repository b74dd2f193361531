import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../../db/database.js';
import { nowIso as now } from '../../db/timestamps.js';
import { findWorkspace } from '../accounts/workspaces.js';
import { HttpError, type FieldErrors } from '../kit/errors.js';
import { validate } from '../kit/validate.js';
import { isWorkspaceOwnersWebsite } from '../websites/data.js';
import { sessionGone, type VisitorAuth } from './auth.js';
import type { WorkspaceBudget } from './budget.js';
import { addMessage, clearConversation, requestHuman } from './conversation.js';
import { checkCoupon } from './coupons.js';
import { findCoupon } from '../bulksync/store.js';
import { insertEvents } from './tables/events.js';
import { insertLead } from './tables/leads.js';
import { countMessages, messagePage } from './tables/messages.js';
import { upsertRating } from './tables/ratings.js';
import {
  deleteSession,
  findSession,
  insertSession,
  lastMessageSeq,
  setTyping,
  touchSession,
  type PlaceParams,
} from './tables/sessions.js';
import {
  conversationPageBody,
  couponBody,
  eventsBody,
  initBody,
  leadBody,
  messageBody,
  satisfactionBody,
  streamBody,
  typingBody,
} from './schemas.js';
import type { MessageNotifier } from './message-notifier.js';
import type { MessageStreams } from './stream.js';
import type { VisitorTokens } from './tokens.js';

export const HUMAN_NOTICE = 'A team member will join shortly.';

export interface WidgetDeps {
  readonly db: Db;
  readonly tokens: VisitorTokens;
  readonly auth: VisitorAuth;
  readonly notifier: MessageNotifier;
  readonly streams: MessageStreams;
  readonly budget: WorkspaceBudget;
}

/** The cursor an SSE client sends back when it reconnects. */
function lastEventId(value: string | string[] | undefined): number | undefined {
  const id = Array.isArray(value) ? value[0] : value;
  if (id === undefined || id.trim() === '') return undefined;
  if (/^\s*\d{1,15}\s*$/.test(id)) return Number(id);
  throw HttpError.field('Last-Event-ID', 'The Last-Event-ID header must be a message id.');
}

const place = (body: { website_id?: number; page_url?: string; locale?: string }): PlaceParams => ({
  websiteId: body.website_id ?? null,
  pageUrl: body.page_url ?? null,
  locale: body.locale ?? null,
});

/** The visitor endpoints: init, then everything a visitor's token allows. */
export function registerRoutes(app: FastifyInstance, deps: WidgetDeps): void {
  const { db, tokens, auth, notifier, streams, budget } = deps;

  app.post('/api/v1/widget/init', async (request) => {
    const body = validate(initBody, request.body);
    const workspace = findWorkspace(db, body.workspace);
    const fields: FieldErrors = {};
    if (!workspace) fields['workspace'] = ['The selected workspace is invalid.'];
    // Only a website of the workspace's owner: another owner's id fails exactly as a missing one,
    // so init tells nobody which ids exist. Without a workspace, no id is valid.
    if (
      body.website_id !== undefined &&
      !(workspace && isWorkspaceOwnersWebsite(db, body.website_id, workspace.id))
    ) {
      fields['website_id'] = ['The selected website_id is invalid.'];
    }
    if (!workspace || Object.keys(fields).length > 0) throw HttpError.validation(fields);

    // A live token of this workspace resumes its session; anything else starts a new one.
    const current = await auth.presentedSession(request);
    const resumed = current !== undefined && current.workspace_id === workspace.id;
    const sessionId = resumed ? current.id : randomUUID();
    if (resumed) touchSession(db, sessionId, place(body), now());
    else {
      budget.take(workspace.id, 'sessions');
      insertSession(db, sessionId, workspace.id, place(body), now());
    }

    const { token, expiresAt } = await tokens.issue(sessionId);
    const session = findSession(db, sessionId)!;
    return {
      token,
      token_type: 'Bearer',
      session_id: sessionId,
      expires_at: expiresAt.toISOString(),
      resumed,
      workspace: { name: workspace.name },
      website_id: session.website_id,
      conversation: {
        messages: countMessages(db, sessionId),
        human_requested: session.human_requested_at !== null,
      },
    };
  });

  // Everything else acts for the visitor of the token.
  void app.register(async (visitor) => {
    visitor.addHook('onRequest', auth.require);
    // Rethrown to the app's handler, which renders it in the widget's shape.
    visitor.setErrorHandler((err) => {
      throw sessionGone(err) ?? err;
    });
    const session = (request: FastifyRequest) => auth.session(request);

    visitor.post('/api/v1/widget/messages', async (request, reply) => {
      const { body } = validate(messageBody, request.body);
      const { id: sessionId, workspace_id } = session(request);
      budget.take(workspace_id, 'stored');
      const message = addMessage(db, sessionId, 'visitor', body);
      notifier.notify(sessionId);
      return reply.status(201).send({ message });
    });

    visitor.post('/api/v1/widget/messages/stream', async (request, reply) => {
      const { after } = validate(streamBody, request.body);
      const header = lastEventId(request.headers['last-event-id']);
      const sessionId = session(request).id;
      streams.open(reply, sessionId, header ?? after ?? lastMessageSeq(db, sessionId));
      return reply;
    });

    const conversationPage = (request: FastifyRequest, params: unknown) => {
      const { after, page, per_page } = validate(conversationPageBody, params);
      const { rows, total } = messagePage(db, session(request).id, after, per_page, (page - 1) * per_page);
      return { messages: rows, page, per_page, total };
    };
    visitor.post('/api/v1/widget/conversation/messages', async (request) =>
      conversationPage(request, request.body),
    );
    // The original widget polls with GET: the same page, its after, page and per_page in the query string.
    // No HEAD twin: the documented surface is this GET and the POST.
    visitor.get('/api/v1/widget/conversation/messages', { exposeHeadRoute: false }, async (request) =>
      conversationPage(request, { ...(request.query as object) }),
    );

    visitor.post('/api/v1/widget/conversation/clear', async (request) => {
      return { cleared: clearConversation(db, session(request).id) };
    });

    visitor.post('/api/v1/widget/request-human', async (request) => {
      const sessionId = session(request).id;
      const { requestedAt, message } = requestHuman(db, sessionId, HUMAN_NOTICE);
      if (message) notifier.notify(sessionId);
      return { conversation: { human_requested: true, human_requested_at: requestedAt }, message };
    });

    visitor.post('/api/v1/widget/events', async (request, reply) => {
      const { events } = validate(eventsBody, request.body);
      const receivedAt = new Date().toISOString();
      const current = session(request);
      budget.take(current.workspace_id, 'stored', events.length);
      insertEvents(
        db,
        current.id,
        events.map((e) => ({
          type: e.type,
          occurredAt: e.occurred_at ? new Date(e.occurred_at).toISOString() : receivedAt,
          data: e.data === undefined ? null : JSON.stringify(e.data),
        })),
        now(),
      );
      return reply.status(202).send({ accepted: events.length });
    });

    visitor.delete('/api/v1/widget/me', async (request) => {
      const sessionId = session(request).id;
      // A concurrent erase may have won; the visitor's data is gone either way.
      deleteSession(db, sessionId);
      notifier.notify(sessionId); // its open streams end
      return { erased: true };
    });

    visitor.post('/api/v1/widget/leads', async (request, reply) => {
      const lead = validate(leadBody, request.body);
      const current = session(request);
      budget.take(current.workspace_id, 'stored');
      const row = insertLead(db, {
        sessionId: current.id,
        workspaceId: current.workspace_id,
        name: lead.name,
        email: lead.email,
        message: lead.message ?? null,
        pageUrl: current.page_url,
        now: now(),
      });
      const { id, name, email, message, created_at } = row;
      return reply.status(201).send({ lead: { id, name, email, message, consent: true, created_at } });
    });

    visitor.post('/api/v1/widget/typing', async (request, reply) => {
      const { typing } = validate(typingBody, request.body);
      setTyping(db, session(request).id, typing ? now() : null);
      return reply.status(204).send();
    });

    visitor.post('/api/v1/widget/satisfaction', async (request) => {
      const { rating, comment } = validate(satisfactionBody, request.body);
      return { satisfaction: upsertRating(db, session(request).id, rating, comment ?? null, now()) };
    });

    visitor.post('/api/v1/widget/coupon/apply', async (request) => {
      const { code } = validate(couponBody, request.body);
      const row = findCoupon(db, session(request).workspace_id, code);
      return { coupon: checkCoupon(row, Date.now()) };
    });
  });
}
