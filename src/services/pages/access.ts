import { createHash } from 'node:crypto';

/** Who may see a statistics or report page, and the values of the pages' cookies. Pure. */

/** 0 public, 1 private (the owner alone), 2 password. */
export interface Guarded {
  readonly id: number;
  readonly userId: number;
  readonly privacy: number;
  readonly passwordHash: string | null;
}

/** show; password: the password form; hidden: a 404, as if the page did not exist. */
export type Access = 'show' | 'password' | 'hidden';

/**
 * The owner always sees the page; anyone else sees a public one, a password one they unlocked, and
 * the password form of a password one. A private page, or a password one without a password set,
 * is hidden from them.
 */
export function pageAccess(page: Guarded, viewer: number | undefined, unlocked: boolean): Access {
  if (viewer === page.userId || page.privacy === 0) return 'show';
  if (page.privacy !== 2 || page.passwordHash === null) return 'hidden';
  return unlocked ? 'show' : 'password';
}

/** The signed session cookie of a signed-in owner. */
export const SESSION_COOKIE = 'tg_session';

/** The signed cookie of one unlocked password page: `w` a website, `r` a report. */
export const unlockCookie = (kind: 'w' | 'r', id: number) => `tg_unlock_${kind}${id}`;

/**
 * "s.<user>.<expires ms>.<key tag>": the expiry is inside the signed value, so a kept cookie cannot
 * outlive it; the tag of the API key signed in with, so a rotated key ends the session at once.
 */
export function sessionValue(userId: number, expiresMs: number, keyTag: string): string {
  return `s.${userId}.${expiresMs}.${keyTag}`;
}

/** The user and key tag of an unexpired session value, or undefined. */
export function sessionUser(value: string, nowMs: number): { user: number; keyTag: string } | undefined {
  const m = /^s\.(\d{1,15})\.(\d{1,15})\.([A-Za-z0-9_-]{16})$/.exec(value);
  if (!m || Number(m[2]) <= nowMs) return undefined;
  return { user: Number(m[1]), keyTag: m[3]! };
}

/**
 * A short digest of the stored password hash, inside the unlock cookie: a new password (a new
 * hash, a new salt) closes every page unlocked with the old one.
 */
function passwordTag(passwordHash: string): string {
  return createHash('sha256').update(passwordHash).digest('base64url').slice(0, 16);
}

export function unlockValue(kind: 'w' | 'r', page: Guarded, expiresMs: number): string {
  return `${kind}.${page.id}.${expiresMs}.${passwordTag(page.passwordHash ?? '')}`;
}

export function isUnlocked(value: string, kind: 'w' | 'r', page: Guarded, nowMs: number): boolean {
  const [k, id, expires, tag, ...rest] = value.split('.');
  return (
    rest.length === 0 &&
    k === kind &&
    id === String(page.id) &&
    /^\d{1,15}$/.test(expires ?? '') &&
    Number(expires) > nowMs &&
    page.passwordHash !== null &&
    tag === passwordTag(page.passwordHash)
  );
}

/**
 * The CSRF check of a cookie-authenticated POST, besides SameSite=Lax: the Origin (else the
 * Referer) must name the host the request was sent to. A POST with neither is refused: every
 * browser sends Origin on a form POST.
 */
export function sameOrigin(
  origin: string | undefined,
  referer: string | undefined,
  host: string | undefined,
): boolean {
  const source = origin && origin !== 'null' ? origin : referer;
  if (!source || !host) return false;
  try {
    return new URL(source).host === host.toLowerCase();
  } catch {
    return false;
  }
}

/**
 * A same-site path to return to after signing in: "/x", never "//host" or "/\host". Printable
 * ASCII only (a browser sends the rest percent-encoded): a Location header cannot hold a control
 * character or one past U+00FF, and the redirect would fail with a 500.
 */
export function safeNext(next: unknown, fallback: string): string {
  return typeof next === 'string' && /^\/(?![/\\])[\x21-\x7e]*$/.test(next) && next.length <= 2048
    ? next
    : fallback;
}
