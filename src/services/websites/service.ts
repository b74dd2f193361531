import { registerCollector } from './analytics/collector.js';
import { startEmailReports } from './analytics/email/scheduler.js';
import { withAnalytics } from './analytics/openapi.js';
import { createStatsSource } from './analytics/sqlite-stats-source.js';
import { registerStatsRoutes } from './analytics/stats-routes.js';
import { pruneRecentVisitsBatch } from './analytics/tables/recent-visits.js';
import { laravelErrors } from '../kit/errors.js';
import { deleteInBatches, every } from '../kit/housekeeping.js';
import { registerCookies } from '../pages/session.js';
import { registerStatsPages } from './pages/stats-pages.js';
import type { ServiceDefinition } from '../service-definition.js';
import { websitesOpenApi } from './openapi.js';
import { laravelInput } from '../kit/input.js';
import { registerReportsHint } from './reports-hint.js';
import { registerRoutes } from './routes.js';

/**
 * The websites API, the stats and account APIs (a user's API key), and the analytics tracking
 * endpoints (public): every host but the analyzer's.
 */
export const websitesService: ServiceDefinition = {
  errors: laravelErrors,
  openapi: withAnalytics(websitesOpenApi),
  servesOpenApi: true,
  async register(app, ctx) {
    // A scope of its own, so the API-key hook covers these routes and leaves the public
    // /api/v1/openapi.json and the 404 of unknown paths alone.
    const { publicUrl } = ctx.config.websites;
    const stats = ctx.stats ?? createStatsSource(ctx.db);
    await app.register(async (scope) => {
      await laravelInput(scope);
      registerRoutes(scope, ctx.db, publicUrl);
      registerStatsRoutes(scope, ctx.db, stats, publicUrl);
    });
    // A reports call sent here (no analyzer Host): the 404 says where the reports API answers.
    await registerReportsHint(app, ctx.config.reports.publicUrl);
    // The tracking script and the collector: public, called from the tracked sites' pages.
    const { maxDistinctValues, recentVisits, housekeepingInterval } = ctx.config.storage;
    await app.register(async (scope) =>
      registerCollector(scope, ctx.db, ctx.config.trustedProxies, {
        maxDistinctValues,
        recentMs: recentVisits,
      }),
    );
    // Visits past their retention go even when no new pageview arrives to prune them.
    app.addHook(
      'onClose',
      every(
        housekeepingInterval,
        () =>
          deleteInBatches((n) => pruneRecentVisitsBatch(ctx.db, Date.now() - recentVisits, n)).then(() => {}),
        app.log,
        'recent visits retention',
      ),
    );
    // The e-mail reports run beside the service that owns the websites; a lease picks one sender.
    const stopReports = startEmailReports(ctx.db, stats, ctx.config.emailReports, ctx.logger);
    app.addHook('onClose', stopReports);
    // The statistics pages: HTML, cookie-authenticated, in a scope of their own.
    await app.register(async (scope) => {
      const sessions = await registerCookies(scope, ctx);
      sessions.registerRoutes(scope);
      registerStatsPages(scope, ctx.db, stats, sessions, {
        settings: ctx.config.pages.exports,
        trustedProxies: ctx.config.trustedProxies,
        publicUrl,
      });
    });
  },
};
