import { methodKey } from './method.js';
import { anyOf, compileHost, compilePath, normaliseHost } from './patterns.js';
import { canonicalTarget } from './request-target.js';

export interface RouteSpec {
  readonly hosts: readonly string[];
  readonly methods: readonly string[];
  readonly paths: readonly string[];
  /** Set when the route answers CORS preflights (its policy). */
  readonly cors?: unknown;
}

/** A route that answers CORS preflights. */
export type CorsRoute<R extends RouteSpec> = R & { readonly cors: NonNullable<R['cors']> };

/**
 * The route a match path took last, for the Host header and method it took it with: most clients
 * repeat all three, and matching is a pure function of them, so the memo answers exactly what the
 * scan would. One entry per path, bounded like the target cache (target-cache.ts): clients choose
 * paths and Host headers.
 */
class LastMatch<R> {
  constructor(
    public host: string | undefined,
    public method: string,
    public route: R | undefined,
  ) {}
}
const MAX_PATHS = 1024;
const MAX_MEMO_LENGTH = 256;

interface CompiledMatcher<R> {
  readonly route: R;
  readonly host: (host: string) => boolean;
  readonly method: (method: string) => boolean;
  readonly path: (path: string) => boolean;
}

/** Ordered routes; the first whose host, method (in any case) and path all match wins. */
export class Router<R extends RouteSpec> {
  readonly #matchers: readonly CompiledMatcher<R>[];
  readonly #last = new Map<string, LastMatch<R>>();

  constructor(
    routes: readonly R[],
    readonly maxPaths = MAX_PATHS,
  ) {
    this.#matchers = routes.map((route) => ({
      route,
      host: anyOf(route.hosts.map(compileHost)),
      method: route.methods.includes('*')
        ? () => true
        : (
            // Any case: `post` is counted as POST (see method.ts). The exact spelling is tried first.
            (set: ReadonlySet<string>) => (m: string) =>
                set.has(m) || set.has(methodKey(m))

          )(new Set(route.methods.map(methodKey))),
      path: anyOf(route.paths.map(compilePath)),
    }));
  }

  /** Paths memoised now (at most maxPaths). */
  get memoised(): number {
    return this.#last.size;
  }

  /** The route of a raw request target (canonicalised here; the request path canonicalises once itself). */
  match(hostHeader: string | undefined, method: string, url: string): R | undefined {
    return this.matchPath(hostHeader, method, canonicalTarget(url).matchPath);
  }

  /** The route of a path already in match form (`CanonicalTarget.matchPath`). */
  matchPath(hostHeader: string | undefined, method: string, path: string): R | undefined {
    const last = this.#last.get(path);
    if (last !== undefined && last.host === hostHeader && last.method === method) return last.route;
    const route = this.#scan(hostHeader, method, path);
    // A preflight's method is the client's Access-Control-Request-Method: bounded like the rest.
    const long = path.length > MAX_MEMO_LENGTH || method.length > MAX_MEMO_LENGTH;
    if (long || (hostHeader !== undefined && hostHeader.length > MAX_MEMO_LENGTH)) return route;
    if (last !== undefined) {
      last.host = hostHeader;
      last.method = method;
      last.route = route;
    } else {
      if (this.#last.size >= this.maxPaths) this.#last.clear();
      this.#last.set(path, new LastMatch(hostHeader, method, route));
    }
    return route;
  }

  /**
   * matchPath without the memo: for a caller whose paths seldom repeat (replay's logs), where
   * the memo's lookups and entries cost more than the scan of a few routes.
   */
  scanPath(hostHeader: string | undefined, method: string, path: string): R | undefined {
    return this.#scan(hostHeader, method, path);
  }

  /** The first route whose path, method and host match: what the memo keeps. */
  #scan(hostHeader: string | undefined, method: string, path: string): R | undefined {
    const host = normaliseHost(hostHeader);
    for (const m of this.#matchers) {
      if (m.path(path) && m.method(method) && m.host(host)) return m.route;
    }
    return undefined;
  }

  /**
   * The route of a CORS preflight: the one the real request, `requestedMethod` (the preflight's
   * Access-Control-Request-Method) on the same host and path, will take, when that route has
   * CORS. Undefined otherwise: the OPTIONS request is then routed as any other request.
   */
  matchPreflight(
    hostHeader: string | undefined,
    requestedMethod: string,
    path: string,
  ): CorsRoute<R> | undefined {
    const route = this.matchPath(hostHeader, requestedMethod, path);
    return route?.cors ? (route as CorsRoute<R>) : undefined;
  }
}
