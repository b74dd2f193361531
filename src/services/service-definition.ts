import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from './context.js';
import type { ErrorStyle } from './kit/errors.js';
import type { OpenApiFragment } from './kit/openapi.js';

/** One embedded service: the error shape of its surface, the routes it adds to its app, and their OpenAPI description. */
export interface ServiceDefinition {
  readonly errors: ErrorStyle;
  readonly openapi: OpenApiFragment;
  /** Serves the OpenAPI document at /api/v1/openapi.json (the services that own a host). */
  readonly servesOpenApi?: boolean;
  register(app: FastifyInstance, ctx: ServiceContext): void | Promise<void>;
}
