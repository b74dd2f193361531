import { routeBodyBound } from '../config/body-bound.js';
import type { GatewayConfig } from '../config/schema.js';
import type { ServicesConfig } from '../services/config.js';

/**
 * What the embedded services read, taken from the gateway's config in this one place: the
 * services.* block, the identity.jwt entry the widget signs with, and bulk sync's body limit.
 */
export function servicesConfigFrom(config: GatewayConfig): ServicesConfig {
  const { services } = config;
  return {
    dataDir: services.dataDir,
    bootstrapApiKeys: services.bootstrapApiKeys,
    maxBodySize: services.maxBodySize,
    websites: services.websites,
    reports: services.reports,
    pages: services.pages,
    bulksync: { ...services.bulksync, maxBodyBytes: bulkSyncBodyLimit(config) },
    emailReports: {
      ...services.emailReports,
      smtp: services.smtp.host === '' ? undefined : services.smtp,
    },
    widget: services.widget,
    storage: services.storage,
    trustedProxies: config.identity.trustedProxies,
    visitorJwt: config.identity.jwt,
  };
}

/**
 * The largest body a bulk-sync client may send: the service's own bound, or a smaller one of a
 * gateway route in front of it (0: no bound). Its handshake reports this, so clients size batches.
 */
export function bulkSyncBodyLimit(config: GatewayConfig): number {
  const bounds = [config.services.maxBodySize];
  for (const route of config.routes) {
    if (config.upstreams[route.upstream]?.embedded === 'bulksync') bounds.push(routeBodyBound(config, route));
  }
  const set = bounds.filter((b) => b > 0);
  return set.length > 0 ? Math.min(...set) : 0;
}
