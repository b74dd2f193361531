import { widgetErrors } from '../kit/errors.js';
import type { ServiceDefinition } from '../service-definition.js';
import { bulkSyncOpenApi } from './openapi.js';
import { registerRoutes } from './routes.js';

/** Bulk sync (/v1/wp/*): a workspace's site pushes its posts, products and coupons with a workspace token. */
export const bulkSyncService: ServiceDefinition = {
  errors: widgetErrors,
  openapi: bulkSyncOpenApi,
  register: registerRoutes,
};
