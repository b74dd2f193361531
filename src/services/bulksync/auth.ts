import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../../db/database.js';
import { bearerToken } from '../../credentials/bearer.js';
import { parseWorkspaceToken } from '../../credentials/workspace-token.js';
import { HttpError } from '../kit/errors.js';
import { workspaceForToken, type Workspace } from '../accounts/workspaces.js';

/** Who calls: the workspace of the verified token, and the token's id. */
export interface Caller {
  readonly workspace: Workspace;
  readonly tokenId: string;
}

const callers = new WeakMap<FastifyRequest, Caller>();

const missingToken = () => new HttpError(401, 'API token missing.', 'missing_token');
const invalidToken = () => new HttpError(401, 'API token is invalid or has been revoked.', 'invalid_token');

/**
 * Requires `Authorization: Bearer <id>|<secret>` on every route of `app`. The service checks the
 * database itself on each request (it may run alone, behind a remote gateway), so a revoked
 * token is refused here at once even while a gateway's cache still trusts it.
 */
export function requireWorkspaceToken(app: FastifyInstance, db: Db): void {
  app.addHook('onRequest', async (request) => {
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) throw missingToken();
    const parsed = parseWorkspaceToken(token);
    const workspace = parsed && workspaceForToken(db, parsed.id, parsed.secret);
    if (!parsed || !workspace) throw invalidToken();
    callers.set(request, { workspace, tokenId: parsed.id });
  });
}

export function callerOf(request: FastifyRequest): Caller {
  const caller = callers.get(request);
  if (!caller) throw new Error('no caller: the workspace token hook did not run');
  return caller;
}
