import type { FastifyInstance } from 'fastify';
import { HttpError, NOT_FOUND } from '../kit/errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A catch-all that only answers a 404 with a hint (not in the OpenAPI document). */
    notFoundHint?: boolean;
  }
}

/**
 * The reports API's paths on the websites host: still the 404 of an unknown path, in the same
 * shape, but saying where the reports API answers (a client that forgot the analyzer host). A
 * not-found handler of their prefixes (and, for GET, two catch-all routes that only answer that 404):
 * the websites API gains no operations.
 */

/** The reports API's prefixes: what a client that lost the analyzer host sends here. */
const REPORTS_PREFIXES = ['/api/v1/reports', '/api/v1/projects'];

/** The message: names the origin of `publicUrl` (the reports API's public base URL) when set. */
export function reportsHint(publicUrl: string): string {
  let origin = '';
  try {
    origin = new URL(publicUrl).origin;
  } catch {
    // Empty (links without a host): the hint names no host.
  }
  return origin
    ? `${NOT_FOUND} The reports API answers on its own host: send this request to ${origin}.`
    : `${NOT_FOUND} The reports API answers on its own host (the analyzer host), not this one.`;
}

export async function registerReportsHint(app: FastifyInstance, publicUrl: string): Promise<void> {
  const message = reportsHint(publicUrl);
  for (const prefix of REPORTS_PREFIXES) {
    await app.register(
      async (scope) => {
        const hint = (): never => {
          throw new HttpError(404, message, 'not_found');
        };
        scope.setNotFoundHandler(hint);
        // GET would otherwise match the statistics pages' /:domain/*, whose 404 is not this one.
        // Marked as a 404's stand-in: not an operation, so the OpenAPI document leaves it out.
        scope.get('/', { config: { notFoundHint: true } }, hint);
        scope.get('/*', { config: { notFoundHint: true } }, hint);
      },
      { prefix },
    );
  }
}
