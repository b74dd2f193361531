import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError, type FieldErrors } from '../kit/errors.js';
import { validate } from '../kit/validate.js';
import { sessionGone, type VisitorAuth } from './auth.js';
import type { WorkspaceBudget } from './budget.js';
import { checkCoupon } from './coupons.js';
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
import type { WidgetStore } from './store.js';
import type { MessageNotifier, MessageStreams } from './stream.js';
import type { VisitorTokens } from './tokens.js';

export const HUMAN_NOTICE = 'A team member will join shortly.';

export interface WidgetDeps {
  readonly store: WidgetStore;
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

export function registerRoutes(app: FastifyInstance, deps: WidgetDeps): void {
  const { store, tokens, auth, notifier, streams, budget } = deps;

  app.post('/api/v1/widget/init', async (request) => {
    const body = validate(initBody, request.body);
    const workspace = store.workspace(body.workspace);
    const fields: FieldErrors = {};
    if (!workspace) fields['workspace'] = ['The selected workspace is invalid.'];
    // Only a website of the workspace's owner: another owner's id fails exactly as a missing one,
    // so init tells nobody which ids exist. Without a workspace, no id is valid.
    if (
      body.website_id !== undefined &&
      !(workspace && store.isOwnersWebsite(body.website_id, workspace.id))
    ) {
      fields['website_id'] = ['The selected website_id is invalid.'];
    }
    if (!workspace || Object.keys(fields).length > 0) throw HttpError.validation(fields);

    const place = { websiteId: body.website_id, pageUrl: body.page_url, locale: body.locale };
    // A live token of this workspace resumes its session; anything else starts a new one.
    const current = await auth.presentedSession(request);
    const resumed = current !== undefined && current.workspace_id === workspace.id;
    const sessionId = resumed ? current.id : randomUUID();
    if (resumed) store.touchSession(sessionId, place);
    else {
      budget.take(workspace.id, 'sessions');
      store.createSession(sessionId, workspace.id, place);
    }

    const { token, expiresAt } = await tokens.issue(sessionId);
    const session = store.session(sessionId)!;
    return {
      token,
      token_type: 'Bearer',
      session_id: sessionId,
      expires_at: expiresAt.toISOString(),
      resumed,
      workspace: { name: workspace.name },
      website_id: session.website_id,
      conversation: {
        messages: store.countMessages(sessionId),
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
      const message = store.addMessage(sessionId, 'visitor', body);
      notifier.notify(sessionId);
      return reply.status(201).send({ message });
    });

    visitor.post('/api/v1/widget/messages/stream', async (request, reply) => {
      const { after } = validate(streamBody, request.body);
      const header = lastEventId(request.headers['last-event-id']);
      const sessionId = session(request).id;
      streams.open(reply, sessionId, header ?? after ?? store.lastMessageId(sessionId));
      return reply;
    });

    const conversationPage = (request: FastifyRequest, params: unknown) => {
      const { page, per_page } = validate(conversationPageBody, params);
      const { rows, total } = store.messagePage(session(request).id, page, per_page);
      return { messages: rows, page, per_page, total };
    };
    visitor.post('/api/v1/widget/conversation/messages', async (request) =>
      conversationPage(request, request.body),
    );
    // The original widget polls with GET: the same page, its page and per_page in the query string.
    // No HEAD twin: the documented surface is this GET and the POST.
    visitor.get('/api/v1/widget/conversation/messages', { exposeHeadRoute: false }, async (request) =>
      conversationPage(request, { ...(request.query as object) }),
    );

    visitor.post('/api/v1/widget/conversation/clear', async (request) => {
      return { cleared: store.clearConversation(session(request).id) };
    });

    visitor.post('/api/v1/widget/request-human', async (request) => {
      const sessionId = session(request).id;
      const { requestedAt, message } = store.requestHuman(sessionId, HUMAN_NOTICE);
      if (message) notifier.notify(sessionId);
      return { conversation: { human_requested: true, human_requested_at: requestedAt }, message };
    });

    visitor.post('/api/v1/widget/events', async (request, reply) => {
      const { events } = validate(eventsBody, request.body);
      const receivedAt = new Date().toISOString();
      const current = session(request);
      budget.take(current.workspace_id, 'stored', events.length);
      store.addEvents(
        current.id,
        events.map((e) => ({
          type: e.type,
          occurredAt: e.occurred_at ? new Date(e.occurred_at).toISOString() : receivedAt,
          data: e.data === undefined ? null : JSON.stringify(e.data),
        })),
      );
      return reply.status(202).send({ accepted: events.length });
    });

    visitor.delete('/api/v1/widget/me', async (request) => {
      const sessionId = session(request).id;
      // A concurrent erase may have won; the visitor's data is gone either way.
      store.erase(sessionId);
      notifier.notify(sessionId); // its open streams end
      return { erased: true };
    });

    visitor.post('/api/v1/widget/leads', async (request, reply) => {
      const lead = validate(leadBody, request.body);
      const current = session(request);
      budget.take(current.workspace_id, 'stored');
      const row = store.addLead(current.id, lead, current.page_url);
      const { id, name, email, message, created_at } = row;
      return reply.status(201).send({ lead: { id, name, email, message, consent: true, created_at } });
    });

    visitor.post('/api/v1/widget/typing', async (request, reply) => {
      const { typing } = validate(typingBody, request.body);
      store.setTyping(session(request).id, typing);
      return reply.status(204).send();
    });

    visitor.post('/api/v1/widget/satisfaction', async (request) => {
      const { rating, comment } = validate(satisfactionBody, request.body);
      return { satisfaction: store.rate(session(request).id, rating, comment) };
    });

    visitor.post('/api/v1/widget/coupon/apply', async (request) => {
      const { code } = validate(couponBody, request.body);
      const row = store.coupon(session(request).workspace_id, code);
      return { coupon: checkCoupon(row, Date.now()) };
    });
  });
}
