/**
 * One canonical form of a request target, used both to match routes and as the target forwarded
 * upstream, so the route that is counted is the route the upstream serves.
 *
 * Canonical form: origin-form only, fragment dropped, escapes of unreserved characters decoded and
 * every other escape in upper-case hex, "." and ".." resolved, runs of "/" collapsed, query kept
 * as sent. Targets that cannot be put in that form without guessing (an encoded "/" or "\", a
 * malformed escape, raw non-ASCII, a backslash, control characters) are refused.
 */

export type CanonicalTarget =
  | {
      readonly ok: true;
      /** The target to forward: canonical path plus the query as sent. */
      readonly target: string;
      readonly path: string;
      /** What routes are matched against: the path lower-cased, without ";params" in segments. */
      readonly matchPath: string;
    }
  | {
      readonly ok: false;
      readonly reason: string;
      /** A best-effort match path (every escape decoded), so a refused target is still counted. */
      readonly matchPath: string;
    };

const HEX = '0123456789ABCDEF';
const hexValue = (c: number): number =>
  c >= 48 && c <= 57 ? c - 48 : c >= 65 && c <= 70 ? c - 55 : c >= 97 && c <= 102 ? c - 87 : -1;
/** RFC 3986 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~". */
const isUnreserved = (c: number): boolean =>
  (c >= 65 && c <= 90) ||
  (c >= 97 && c <= 122) ||
  (c >= 48 && c <= 57) ||
  c === 45 ||
  c === 46 ||
  c === 95 ||
  c === 126;

const PLAIN_CHARS = /^\/[A-Za-z0-9\-._~/]*$/;
const DOT_OR_EMPTY_SEGMENT = /\/\/|\/\.\.?(?:\/|$)/;
/** Already canonical: only unreserved characters and "/", no empty, "." or ".." segment. */
const isPlain = (path: string): boolean => PLAIN_CHARS.test(path) && !DOT_OR_EMPTY_SEGMENT.test(path);

export function canonicalTarget(raw: string): CanonicalTarget {
  const hash = raw.indexOf('#');
  const noFragment = hash === -1 ? raw : raw.slice(0, hash);
  const q = noFragment.indexOf('?');
  const rawPath = q === -1 ? noFragment : noFragment.slice(0, q);
  const query = q === -1 ? '' : noFragment.slice(q);
  // The common case: nothing to decode or resolve.
  if (isPlain(rawPath)) {
    return { ok: true, target: rawPath + query, path: rawPath, matchPath: matchForm(rawPath) };
  }
  if (rawPath[0] !== '/') return refuse('the request target must be a path starting with "/"', rawPath);
  let decoded = '';
  for (let i = 0; i < rawPath.length; i++) {
    const c = rawPath.charCodeAt(i);
    if (c === 37 /* % */) {
      const hi = hexValue(rawPath.charCodeAt(i + 1));
      const lo = hexValue(rawPath.charCodeAt(i + 2));
      if (hi < 0 || lo < 0) return refuse('the path has a malformed percent-escape', rawPath);
      const byte = hi * 16 + lo;
      if (byte === 0x2f || byte === 0x5c) return refuse('the path has an encoded "/" or "\\"', rawPath);
      if (byte < 0x20 || byte === 0x7f) return refuse('the path has an encoded control character', rawPath);
      decoded += isUnreserved(byte) ? String.fromCharCode(byte) : `%${HEX[hi]}${HEX[lo]}`;
      i += 2;
    } else if (c === 92 /* \ */) {
      return refuse('the path has a "\\"', rawPath);
    } else if (c <= 0x20 || c >= 0x7f) {
      return refuse('the path has a character that must be percent-encoded', rawPath);
    } else decoded += rawPath[i];
  }
  const path = resolveSegments(decoded);
  return { ok: true, target: path + query, path, matchPath: matchForm(path) };
}

/**
 * canonicalTarget(raw).matchPath, without the target and path it builds too: for a caller that
 * routes and forwards nothing (replay reads a match path a line).
 */
export function matchPathOf(raw: string): string {
  // The path ends at the query or the fragment, whichever comes first.
  const q = raw.indexOf('?');
  const hash = raw.indexOf('#');
  const end = q === -1 || (hash !== -1 && hash < q) ? hash : q;
  const rawPath = end === -1 ? raw : raw.slice(0, end);
  return isPlain(rawPath) ? matchForm(rawPath) : canonicalTarget(raw).matchPath;
}

/** "." and ".." resolved (never above the root), empty segments dropped; a trailing "/" is kept. */
function resolveSegments(path: string): string {
  const out: string[] = [];
  const segments = path.split('/');
  for (const segment of segments) {
    if (segment === '..') out.pop();
    else if (segment !== '.' && segment !== '') out.push(segment);
  }
  const last = segments[segments.length - 1];
  const trailing = out.length > 0 && (last === '' || last === '.' || last === '..');
  return `/${out.join('/')}${trailing ? '/' : ''}`;
}

/**
 * Routes are matched case-insensitively and without ";params": some upstream routers ignore case
 * or treat ";" as a delimiter, and for a limiter counting too much is safe, too little is not.
 */
function matchForm(path: string): string {
  const lower = path.toLowerCase();
  return lower.includes(';') ? lower.replace(/;[^/]*/g, '') : lower;
}

function refuse(reason: string, rawPath: string): CanonicalTarget {
  return { ok: false, reason, matchPath: matchForm(resolveSegments(decodeEverything(rawPath))) };
}

/** Every valid escape decoded, "\" taken as "/": how the most lenient upstream could read the path. */
function decodeEverything(rawPath: string): string {
  const start = rawPath.startsWith('/')
    ? rawPath
    : `/${rawPath.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '')}`;
  const decoded = start.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
  // eslint-disable-next-line no-control-regex -- control characters are what is being dropped
  return decoded.replace(/\\/g, '/').replace(/[\u0000-\u001f\u007f]/g, '');
}
