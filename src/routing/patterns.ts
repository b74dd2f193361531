import { canonicalTarget } from './request-target.js';

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
 * every path that starts with "/a/b". Patterns are put in the same match form as request paths
 * (see request-target.ts), so they compare case-insensitively.
 */
export function compilePath(pattern: string): PathMatcher {
  if (pattern.endsWith('*')) {
    const prefix = canonicalTarget(pattern.slice(0, -1)).matchPath;
    return (path) => path.startsWith(prefix);
  }
  const exact = canonicalTarget(pattern).matchPath.replace(/(.)\/$/, '$1');
  const withSlash = `${exact}/`;
  return (path) => path === exact || path === withSlash;
}

export function anyOf<T>(matchers: readonly ((v: T) => boolean)[]): (v: T) => boolean {
  if (matchers.length === 1) return matchers[0]!;
  return (v) => matchers.some((m) => m(v));
}

/**
 * The host a request names, lower-cased, without its port and without one trailing dot
 * ("[::1]:80" → "[::1]", "Analyzer.localhost.:8080" → "analyzer.localhost").
 */
export function normaliseHost(hostHeader: string | undefined): string {
  if (!hostHeader) return '';
  const h = hostHeader.toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end === -1 ? h : h.slice(0, end + 1);
  }
  const colon = h.indexOf(':');
  const name = colon === -1 ? h : h.slice(0, colon);
  return name.endsWith('.') ? name.slice(0, -1) : name;
}
