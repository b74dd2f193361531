import type { FastifyInstance } from 'fastify';
import { HttpError, NOT_FOUND } from '../kit/errors.js';

/**
 * The reports API's paths on the websites host: still the 404 of an unknown path, in the same
 * shape, but saying where the reports API answers (a client that forgot the analyzer host). A
 * not-found handler of their prefixes, not routes: the websites API gains no paths.
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
        scope.setNotFoundHandler(() => {
          throw new HttpError(404, message, 'not_found');
        });
      },
      { prefix },
    );
  }
}
