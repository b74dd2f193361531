import { widgetErrors } from '../kit/errors.js';
import type { ServiceDefinition } from '../service-definition.js';
import { deleteInBatches, every } from '../kit/housekeeping.js';
import { VisitorAuth } from './auth.js';
import { WorkspaceBudget } from './budget.js';
import { widgetOpenApi } from './openapi.js';
import { registerRoutes } from './routes.js';
import { WidgetStore } from './store.js';
import { MessageNotifier, MessageStreams } from './stream.js';
import { createVisitorTokens } from './tokens.js';

/** The embedded visitor widget: sessions with their own JWTs, conversations (with SSE), events, leads, ratings, coupons. */
export const widgetService: ServiceDefinition = {
  errors: widgetErrors,
  openapi: widgetOpenApi,
  async register(app, ctx) {
    const tokens = await createVisitorTokens(ctx.config.visitorJwt);
    const store = new WidgetStore(ctx.db);
    const notifier = new MessageNotifier(app.log);
    const streams = new MessageStreams(store, notifier, { log: app.log });
    // Open streams never end by themselves: end them, or closing would wait for every visitor to leave.
    app.addHook('preClose', async () => streams.endAll());
    const budget = new WorkspaceBudget(ctx.db, ctx.config.widget);
    const { widgetEvents, housekeepingInterval } = ctx.config.storage;
    // Ended budget windows, and raw events past their retention, go in the background.
    const stopHousekeeping = every(
      housekeepingInterval,
      async () => {
        budget.prune();
        if (widgetEvents > 0) {
          const before = new Date(Date.now() - widgetEvents).toISOString();
          await deleteInBatches((n) => store.deleteEventsBefore(before, n));
        }
      },
      app.log,
      'widget housekeeping',
    );
    app.addHook('onClose', stopHousekeeping);
    registerRoutes(app, { store, tokens, auth: new VisitorAuth(tokens, store), notifier, streams, budget });
  },
};
