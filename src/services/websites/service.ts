import { laravelErrors } from '../errors.js';
import type { ServiceDefinition } from '../registry.js';
import { websitesOpenApi } from './openapi.js';
import { registerWebsiteRoutes } from './routes.js';

/** The websites API: every host but the analyzer's, authenticated with a user's API key. */
export const websitesService: ServiceDefinition = {
  errors: laravelErrors,
  openapi: websitesOpenApi,
  servesOpenApi: true,
  async register(app, ctx) {
    // A scope of its own, so the API-key hook covers these routes and leaves the public
    // /api/v1/openapi.json and the 404 of unknown paths alone.
    const { publicUrl } = ctx.config.websites;
    await app.register(async (scope) => registerWebsiteRoutes(scope, ctx.db, publicUrl));
  },
};
