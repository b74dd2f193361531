import { widgetErrors } from '../kit/errors.js';
import { deleteInBatches, every } from '../kit/housekeeping.js';
import { registerCookies } from '../pages/session.js';
import type { ServiceDefinition } from '../service-definition.js';
import { VisitorAuth } from './auth.js';
import { WorkspaceBudget } from './budget.js';
import { deleteEventsBefore } from './tables/events.js';
import { registerInboxApi } from './inbox/api.js';
import { registerInboxPage } from './inbox/page.js';
import { widgetOpenApi } from './openapi.js';
import { registerRoutes } from './routes.js';
import { MessageNotifier } from './message-notifier.js';
import { MessageSource } from './message-source.js';
import { MessageStreams } from './stream.js';
import { createVisitorTokens } from './tokens.js';

/**
 * The embedded visitor widget: sessions with their own JWTs, conversations (with SSE), events,
 * leads, ratings, coupons; and the owner's inbox (an API with their API key, and a page).
 */
export const widgetService: ServiceDefinition = {
  errors: widgetErrors,
  openapi: widgetOpenApi,
  async register(app, ctx) {
    const { db } = ctx;
    const tokens = await createVisitorTokens(ctx.config.visitorJwt);
    const notifier = new MessageNotifier(app.log);
    const streams = new MessageStreams(new MessageSource(db), notifier, { log: app.log });
    // Open streams never end by themselves: end them, or closing would wait for every visitor to leave.
    app.addHook('preClose', async () => streams.endAll());
    const budget = new WorkspaceBudget(db, ctx.config.widget);
    const { widgetEvents, housekeepingInterval } = ctx.config.storage;
    // Ended budget windows, and raw events past their retention, go in the background.
    const stopHousekeeping = every(
      housekeepingInterval,
      async () => {
        budget.prune();
        if (widgetEvents > 0) {
          const before = new Date(Date.now() - widgetEvents).toISOString();
          await deleteInBatches((n) => deleteEventsBefore(db, before, n));
        }
      },
      app.log,
      'widget housekeeping',
    );
    app.addHook('onClose', stopHousekeeping);
    registerRoutes(app, { db, tokens, auth: new VisitorAuth(tokens, db), notifier, streams, budget });
    // The owner's inbox API: a scope of its own, so its API-key hook covers only these routes.
    await app.register(async (scope) => registerInboxApi(scope, db, notifier));
    // The inbox page, signed in as the statistics pages are (the same cookie, secret and /_/login).
    await app.register(async (scope) => {
      const sessions = await registerCookies(scope, ctx);
      sessions.registerRoutes(scope);
      registerInboxPage(scope, db, sessions, notifier);
    });
  },
};
