import type { GatewayConfig, RouteConfig } from './schema.js';

/**
 * The body bound the gateway applies on a route, in bytes (0: streamed unbounded): the route's own,
 * else requests.maxBodySize, else services.maxBodySize. A route to an embedded service run in this
 * process is never looser than the service's own bound: otherwise the service, not the gateway,
 * would refuse the body, answering 413 and closing while the body is still being sent (a 502).
 */
export function routeBodyBound(config: GatewayConfig, route: RouteConfig): number {
  const own = config.services.maxBodySize;
  const chosen = route.maxBodySize ?? config.requests.maxBodySize ?? own;
  const upstream = config.upstreams[route.upstream];
  const embeddedHere = upstream !== undefined && upstream.embedded !== undefined && !upstream.url;
  return embeddedHere && (chosen === 0 || chosen > own) ? own : chosen;
}
