import { anyOf, compileHost, compilePath, normaliseHost, normalisePath, pathOf } from './patterns.js';

export interface RouteSpec {
  readonly hosts: readonly string[];
  readonly methods: readonly string[];
  readonly paths: readonly string[];
}

interface CompiledMatcher<R> {
  readonly route: R;
  readonly host: (host: string) => boolean;
  readonly method: (method: string) => boolean;
  readonly path: (path: string) => boolean;
}

/** Ordered routes; the first whose host, method and path all match wins. */
export class Router<R extends RouteSpec> {
  readonly #matchers: readonly CompiledMatcher<R>[];

  constructor(routes: readonly R[]) {
    this.#matchers = routes.map((route) => ({
      route,
      host: anyOf(route.hosts.map(compileHost)),
      method: route.methods.includes('*')
        ? () => true
        : (
            (set: ReadonlySet<string>) => (m: string) =>
              set.has(m)
          )(new Set(route.methods)),
      path: anyOf(route.paths.map(compilePath)),
    }));
  }

  match(hostHeader: string | undefined, method: string, url: string): R | undefined {
    const host = normaliseHost(hostHeader);
    const path = normalisePath(pathOf(url));
    for (const m of this.#matchers) {
      if (m.path(path) && m.method(method) && m.host(host)) return m.route;
    }
    return undefined;
  }
}
