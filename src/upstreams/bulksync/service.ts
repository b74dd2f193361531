import { widgetErrors } from '../errors.js';
import type { ServiceDefinition } from '../registry.js';

export const bulkSyncService: ServiceDefinition = {
  errors: widgetErrors,
  openapi: { paths: {} },
  register() {},
};
