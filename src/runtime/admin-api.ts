import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bearerToken } from '../credentials/bearer.js';
import { sha256 } from '../credentials/digest.js';
import { sendError } from '../http/responses.js';

/**
 * One route of the admin listener's API (overrides, bans, …). Reads (GET) are open to whoever can
 * reach the admin listener; anything else needs the admin token (`admin.token`).
 */
export interface AdminRoute {
  readonly method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  /** An exact path, or a prefix ending in "/" whose rest is handed to `handle` (e.g. "/v1/bans/"). */
  readonly path: string;
  handle(req: IncomingMessage, res: ServerResponse, rest: string): void | Promise<void>;
}

/** The largest JSON body an admin route reads. */
export const ADMIN_BODY_LIMIT = 256 * 1024;

/** Whether the request carries the admin token; answers 401 or 403 itself when it does not. */
export function authorizeAdmin(
  req: IncomingMessage,
  res: ServerResponse,
  token: string | undefined,
): boolean {
  if (!token) {
    sendError(res, 403, 'admin_disabled', 'Set admin.token (ADMIN_TOKEN) to change anything here.');
    return false;
  }
  const given = bearerToken(req.headers.authorization);
  // Digests first, so the comparison takes the same time whatever the lengths.
  if (given === undefined || !timingSafeEqual(sha256(given), sha256(token))) {
    sendError(res, 401, 'unauthorized', 'Send "Authorization: Bearer <admin token>".', {
      'www-authenticate': 'Bearer realm="tollgate-admin"',
    });
    return false;
  }
  return true;
}

/** The route for a method and path; `rest` is what follows a prefix route's path. */
export function findAdminRoute(
  routes: readonly AdminRoute[],
  method: string,
  path: string,
): { route: AdminRoute; rest: string } | 'wrong-method' | undefined {
  let pathMatched = false;
  for (const route of routes) {
    const prefix = route.path.endsWith('/');
    const matches = prefix ? path.startsWith(route.path) : path === route.path;
    if (!matches) continue;
    pathMatched = true;
    if (route.method === method) return { route, rest: prefix ? path.slice(route.path.length) : '' };
  }
  return pathMatched ? 'wrong-method' : undefined;
}

/** Reads a JSON body of at most ADMIN_BODY_LIMIT bytes; answers 400/413 itself and resolves undefined. */
export async function readAdminJson(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > ADMIN_BODY_LIMIT) {
        sendError(res, 413, 'body_too_large', `The body may hold at most ${ADMIN_BODY_LIMIT} bytes.`, {
          connection: 'close',
        });
        return undefined;
      }
      chunks.push(chunk);
    }
  } catch {
    return undefined; // the client went away
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    sendError(res, 400, 'invalid_json', 'The body is not JSON.');
    return undefined;
  }
}
