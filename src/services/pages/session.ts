import { join } from 'node:path';
import fastifyCookie, { type CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { readOrCreateSecret } from '../../credentials/secret-file.js';
import type { Db } from '../../db/database.js';
import { presentedKeyTag, userForKey, userHasKeyTag } from '../accounts/accounts.js';
import type { ServiceContext } from '../context.js';
import { verifyPassword } from '../accounts/passwords.js';
import {
  isUnlocked,
  safeNext,
  sameOrigin,
  SESSION_COOKIE,
  sessionUser,
  sessionValue,
  unlockCookie,
  unlockValue,
  type Guarded,
} from './access.js';
import { PAGE_ROUTE, registerAssets } from './assets.js';
import { html } from './html.js';
import { LOGIN_PATH, LOGOUT_PATH, loginPage, page, sendPage } from './layout.js';

/** The file of the secret signing the pages' cookies: services.pages.secretFile, else in dataDir. */
export function pagesSecretFile(ctx: ServiceContext): string {
  return ctx.config.pages.secretFile || join(ctx.config.dataDir, 'pages-cookie.secret');
}

type FormRequest = FastifyRequest<{
  Body: Record<string, unknown> | undefined;
  Querystring: Record<string, unknown>;
}>;

/**
 * The pages' cookies of one host: the owner's sign-in (an API key entered at /_/login) and the
 * unlocked password pages, each a value signed by @fastify/cookie (HMAC-SHA256) with its expiry
 * inside, HttpOnly, SameSite=Lax, Secure behind HTTPS.
 */
export class PageSessions {
  constructor(
    private readonly db: Db,
    private readonly sessionTtl: number,
    private readonly unlockTtl: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The signed-in owner (a valid, unexpired cookie of a user that still holds the API key it signed
   * in with: checked on every request, so a rotated key or a deleted user ends it at once), or undefined.
   */
  viewer(request: FastifyRequest): number | undefined {
    const raw = request.cookies[SESSION_COOKIE];
    if (!raw) return undefined;
    const unsigned = request.unsignCookie(raw);
    if (!unsigned.valid || unsigned.value === null) return undefined;
    const session = sessionUser(unsigned.value, this.now());
    return session !== undefined && userHasKeyTag(this.db, session.user, session.keyTag)
      ? session.user
      : undefined;
  }

  unlocked(request: FastifyRequest, kind: 'w' | 'r', guarded: Guarded): boolean {
    const raw = request.cookies[unlockCookie(kind, guarded.id)];
    if (!raw) return false;
    const unsigned = request.unsignCookie(raw);
    return unsigned.valid && unsigned.value !== null && isUnlocked(unsigned.value, kind, guarded, this.now());
  }

  /** Opens a password page for unlockTtl, for the paths under `path` only. */
  unlock(
    request: FastifyRequest,
    reply: FastifyReply,
    kind: 'w' | 'r',
    guarded: Guarded,
    path: string,
  ): void {
    const expires = this.now() + this.unlockTtl;
    void reply.setCookie(unlockCookie(kind, guarded.id), unlockValue(kind, guarded, expires), {
      ...cookieFlags(request, this.unlockTtl),
      path,
    });
  }

  /** Whether the password opens the page (its scrypt hash; a malformed stored hash opens nothing). */
  async checkPassword(password: string, guarded: Guarded): Promise<boolean> {
    if (guarded.passwordHash === null) return false;
    return verifyPassword(password, guarded.passwordHash).catch(() => false);
  }

  /** Sign-in, sign-out and the static files, on the app of one host. */
  registerRoutes(app: FastifyInstance): void {
    registerAssets(app);
    app.get(LOGIN_PATH, PAGE_ROUTE, async (request: FormRequest, reply) => {
      const next = safeNext(request.query.next, '/');
      if (this.viewer(request) !== undefined) return reply.redirect(next, 303);
      return sendPage(reply, 200, loginPage(next));
    });
    app.post(LOGIN_PATH, PAGE_ROUTE, async (request: FormRequest, reply) => {
      if (!checkOrigin(request, reply)) return reply;
      const next = safeNext(request.body?.next, '/');
      const sent = request.body?.key;
      const key = typeof sent === 'string' ? sent : '';
      const user = key !== '' ? userForKey(this.db, key) : undefined;
      if (user === undefined) return sendPage(reply, 401, loginPage(next, 'That API key is not valid.'));
      const value = sessionValue(user, this.now() + this.sessionTtl, presentedKeyTag(key));
      void reply.setCookie(SESSION_COOKIE, value, {
        ...cookieFlags(request, this.sessionTtl),
        path: '/',
      });
      return reply.redirect(next, 303);
    });
    app.post(LOGOUT_PATH, PAGE_ROUTE, async (request, reply) => {
      if (!checkOrigin(request, reply)) return reply;
      void reply.clearCookie(SESSION_COOKIE, {
        path: '/',
        httpOnly: true,
        sameSite: 'lax',
        secure: isHttps(request),
      });
      return reply.redirect('/', 303);
    });
  }
}

/** The cookie plugin, with the secret read from (or created in) the secret file. */
export async function registerCookies(app: FastifyInstance, ctx: ServiceContext): Promise<PageSessions> {
  const secret = await readOrCreateSecret(pagesSecretFile(ctx));
  await app.register(fastifyCookie, { secret });
  return new PageSessions(ctx.db, ctx.config.pages.sessionTtl, ctx.config.pages.unlockTtl);
}

/** The host the browser sent the request to (the gateway passes it as X-Forwarded-Host). */
export function requestHost(request: FastifyRequest): string | undefined {
  const forwarded = request.headers['x-forwarded-host'];
  return typeof forwarded === 'string' ? forwarded.split(',')[0]!.trim() : request.headers.host;
}

function isHttps(request: FastifyRequest): boolean {
  const proto = request.headers['x-forwarded-proto'];
  return typeof proto === 'string' ? proto.split(',')[0]!.trim() === 'https' : request.protocol === 'https';
}

/** What a cookie value may not hold as is (RFC 6265 cookie-octets), and `%` so that decoding gives it back. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what must be encoded
const NOT_COOKIE_OCTET = /[\u0000-\u0020\u007F-\uFFFF",;\\%]/;

/**
 * Percent-encodes a value only when it must: a signed value (base64, with `+` and `/`) goes out
 * as is, whichever major of the `cookie` package @fastify/cookie runs on (1.x encodes every value).
 */
export const encodeCookieValue = (value: string): string =>
  NOT_COOKIE_OCTET.test(value) ? encodeURIComponent(value) : value;

function cookieFlags(request: FastifyRequest, ttlMs: number): CookieSerializeOptions {
  return {
    encode: encodeCookieValue,
    signed: true,
    httpOnly: true,
    sameSite: 'lax',
    secure: isHttps(request),
    maxAge: Math.floor(ttlMs / 1000),
  };
}

/** The CSRF check of a page's POST; on failure it has answered with a 403 page. */
export function checkOrigin(request: FastifyRequest, reply: FastifyReply): boolean {
  const referer = request.headers.referer;
  if (sameOrigin(request.headers.origin, referer, requestHost(request))) return true;
  void sendPage(
    reply,
    403,
    page({
      title: 'Forbidden',
      signedIn: false,
      here: '/',
      body: html`<h1>Forbidden</h1>
        <p>This form was sent from another site, so it was not accepted.</p>`,
    }),
  );
  return false;
}
