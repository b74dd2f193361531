import { widgetErrors } from '../errors.js';
import type { ServiceDefinition } from '../registry.js';

export const widgetService: ServiceDefinition = {
  errors: widgetErrors,
  openapi: { paths: {} },
  register() {},
};
