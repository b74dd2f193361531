import type { FastifyRequest } from 'fastify';
import { visitorToken } from '../../credentials/visitor-jwt.js';
import type { Db } from '../../db/database.js';
import { HttpError } from '../kit/errors.js';
import { SessionGoneError } from './conversation.js';
import { findSession, type SessionRow } from './tables/sessions.js';
import type { VisitorTokens } from './tokens.js';

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

const presented = (request: FastifyRequest) =>
  visitorToken(first(request.headers.authorization), first(request.headers['x-widget-token']));

/** A session erased after the request was authenticated: its rows can no longer be written. */
export function sessionGone(err: unknown): HttpError | undefined {
  const gone =
    err instanceof SessionGoneError || (err as { code?: unknown }).code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
  return gone ? REJECTIONS.gone : undefined;
}

const REJECTIONS = {
  missing: new HttpError(401, 'Visitor token missing.', 'missing_token'),
  expired: new HttpError(401, 'Visitor token has expired.', 'token_expired'),
  invalid: new HttpError(401, 'Visitor token is invalid.', 'invalid_token'),
  gone: new HttpError(401, 'The visitor session no longer exists. Call init for a new one.', 'invalid_token'),
} as const;

/**
 * The visitor token on every widget endpoint but init: verified here too, since the service may run
 * alone (`tollgate serve widget`), and its session must still exist (DELETE /me ends it).
 */
export class VisitorAuth {
  readonly #sessions = new WeakMap<FastifyRequest, SessionRow>();

  constructor(
    private readonly tokens: VisitorTokens,
    private readonly db: Db,
  ) {}

  /** An onRequest hook: 401 unless the request carries a valid token of a live session. */
  readonly require = async (request: FastifyRequest): Promise<void> => {
    const outcome = await this.tokens.verify(presented(request));
    if (!outcome.ok) throw REJECTIONS[outcome.reason];
    const session = findSession(this.db, outcome.session);
    if (!session) throw REJECTIONS.gone;
    this.#sessions.set(request, session);
  };

  /** The authenticated request's session. */
  session(request: FastifyRequest): SessionRow {
    const session = this.#sessions.get(request);
    if (!session) throw new Error('widget route registered without the visitor-token hook');
    return session;
  }

  /** The live session of the token a request carries, if any (init resumes it). */
  async presentedSession(request: FastifyRequest): Promise<SessionRow | undefined> {
    const outcome = await this.tokens.verify(presented(request));
    return outcome.ok ? findSession(this.db, outcome.session) : undefined;
  }
}
