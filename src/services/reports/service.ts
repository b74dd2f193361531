import { requireApiKey } from '../accounts/accounts.js';
import { laravelErrors } from '../kit/errors.js';
import { registerReportPages } from './report-pages.js';
import { registerCookies } from '../pages/session.js';
import type { ServiceDefinition } from '../service-definition.js';
import { isPublicAddress, systemResolver } from './address-policy.js';
import { AnalysisPool, defaultAnalysisThreads } from './analysis-pool.js';
import { PageFetcher } from './fetch-page.js';
import { laravelInput } from '../kit/input.js';
import { reportsOpenApi } from './openapi.js';
import { registerRoutes } from './routes.js';

/** The reports API (the analyzer host): page reports of API-key users, analysed on store. */
export const reportsService: ServiceDefinition = {
  errors: laravelErrors,
  openapi: reportsOpenApi,
  servesOpenApi: true,
  register(app, ctx) {
    const settings = ctx.config.reports;
    const fetcher = new PageFetcher(
      { timeout: settings.fetchTimeout, maxRedirects: settings.maxRedirects, maxSize: settings.maxPageSize },
      settings.allowPrivateNetworks ? undefined : { resolve: systemResolver, allowed: isPublicAddress },
    );
    const pool = new AnalysisPool({
      threads: defaultAnalysisThreads(),
      timeoutMs: settings.analysisTimeout,
      maxQueue: settings.analysisQueue,
    });
    app.addHook('onClose', () => Promise.all([fetcher.close(), pool.close()]).then(() => undefined));
    // In its own scope, so the API key hook leaves the OpenAPI document public.
    void app.register(async (api) => {
      requireApiKey(api, ctx.db);
      await laravelInput(api);
      registerRoutes(api, ctx.db, fetcher, pool, settings.publicUrl);
    });
    // The report pages: HTML, cookie-authenticated, in a scope of their own.
    void app.register(async (scope) => {
      const sessions = await registerCookies(scope, ctx);
      sessions.registerRoutes(scope);
      registerReportPages(scope, ctx.db, sessions);
    });
  },
};
