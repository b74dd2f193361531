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

/** "/a/b" matches exactly; "/a/b*" matches every path that starts with "/a/b". */
export function compilePath(pattern: string): PathMatcher {
  if (pattern.endsWith('*')) {
    const prefix = pattern.slice(0, -1);
    return (path) => path.startsWith(prefix);
  }
  return (path) => path === pattern;
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
 * percent-decoded, "//" collapsed, "." and ".." resolved, and no trailing "/" ("/a/%69nit/" is
 * "/a/init"). Plain paths, the common case, are returned as they are.
 */
export function normalisePath(path: string): string {
  let p = path;
  if (p.includes('%')) {
    try {
      p = decodeURIComponent(p);
    } catch {
      // malformed escapes: no upstream route matches them either
    }
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
  if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  return p;
}
