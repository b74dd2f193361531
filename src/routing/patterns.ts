/** Precompiled matchers for the host, method and path parts of a route. No regex is built per request. */

export type HostMatcher = (host: string) => boolean;
export type PathMatcher = (path: string) => boolean;

/** "*" any host; "*.example.com" any subdomain; otherwise an exact, case-insensitive host (port ignored). */
export function compileHost(pattern: string): HostMatcher {
  const p = pattern.toLowerCase();
  if (p === '*') return () => true;
  if (p.startsWith('*.')) {
    const suffix = p.slice(1);
    return (host) => host.endsWith(suffix) && host.length > suffix.length;
  }
  return (host) => host === p;
}

/**
 * "/a/b" matches "/a/b" and "/a/b/" (upstream routers ignore a trailing slash); "/a/b*" matches
 * every path that starts with "/a/b".
 */
export function compilePath(pattern: string): PathMatcher {
  if (pattern.endsWith('*')) {
    const prefix = normalisePath(pattern.slice(0, -1));
    return (path) => path.startsWith(prefix);
  }
  const exact = normalisePath(pattern).replace(/(.)\/$/, '$1');
  const withSlash = `${exact}/`;
  return (path) => path === exact || path === withSlash;
}

export function anyOf<T>(matchers: readonly ((v: T) => boolean)[]): (v: T) => boolean {
  if (matchers.length === 1) return matchers[0]!;
  return (v) => matchers.some((m) => m(v));
}

/** The host a request names, lower-cased and without its port ("[::1]:80" → "[::1]"). */
export function normaliseHost(hostHeader: string | undefined): string {
  if (!hostHeader) return '';
  const h = hostHeader.toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end === -1 ? h : h.slice(0, end + 1);
  }
  const colon = h.indexOf(':');
  return colon === -1 ? h : h.slice(0, colon);
}

/** The path of a request target, without its query string. */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * The path as an upstream router would see it, so a limited route cannot be dodged by spelling:
 * percent-decoded, "//" collapsed, "." and ".." resolved ("/a/%69nit" is "/a/init"). A trailing
 * "/" is kept: exact patterns accept it. Plain paths, the common case, are returned as they are.
 */
export function normalisePath(path: string): string {
  let p = path;
  if (p.includes('%')) {
    // Each run of escapes on its own: one malformed escape must not leave the rest encoded.
    p = p.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  }
  if (p.includes('//')) p = p.replace(/\/{2,}/g, '/');
  if (p.includes('/.')) {
    const out: string[] = [];
    for (const segment of p.split('/')) {
      if (segment === '..') {
        if (out.length > 1) out.pop();
      } else if (segment !== '.') out.push(segment);
    }
    p = out.join('/') || '/';
  }
  return p;
}
