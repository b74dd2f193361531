import { laravelErrors } from '../errors.js';
import type { ServiceDefinition } from '../registry.js';

export const websitesService: ServiceDefinition = {
  errors: laravelErrors,
  openapi: { paths: {} },
  servesOpenApi: true,
  register() {},
};
