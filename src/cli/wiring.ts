import type { Logger } from 'pino';
import type { RuleTable } from '../rules/compile.js';
import type { GatewayConfig } from '../config/schema.js';
import type { WorkspaceTokenStore } from '../credentials/workspace-token.js';
import type { EmbeddedUpstreams } from '../runtime/embedded-upstreams.js';
import { Gateway, type GatewayOptions } from '../runtime/gateway.js';
import { CachedTokenStore } from '../identity/token-verification.js';
import type { EmbeddedServices } from '../services/embedded.js';
import { servicesConfigFrom } from './services-config.js';

/**
 * The embedded services as the gateway sees them. Nothing of theirs (fastify, SQLite, the analysis
 * threads) is loaded until an upstream or the token source first asks for them, so a pure proxy
 * never pays for them; a reload that adds an embedded upstream loads them then. Their settings are
 * the start-up config's (services.* and identity.jwt change only on restart).
 */
export function embeddedUpstreams(config: GatewayConfig, logger: Logger): EmbeddedUpstreams {
  let loading: Promise<EmbeddedServices> | undefined;
  let tokens: WorkspaceTokenStore | undefined;
  const services = () =>
    (loading ??= import('../services/embedded.js').then(
      ({ EmbeddedServices }) => new EmbeddedServices(servicesConfigFrom(config), logger),
    ));
  return {
    url: async (name) => (await services()).url(name),
    async workspaceTokens() {
      const loaded = await services();
      // One cache for the process, so a reload keeps the tokens it has verified.
      tokens ??= new CachedTokenStore(loaded.tokenStore(), config.identity.workspaceTokens.cacheTtl);
      return tokens;
    },
    async close() {
      const loaded = await loading?.catch(() => undefined);
      await loaded?.close();
    },
  };
}

/** A gateway with the embedded services wired in, as `tollgate start` runs it. */
export function startGatewayWithServices(table: RuleTable, options: GatewayOptions): Promise<Gateway> {
  return Gateway.start(table, { embedded: embeddedUpstreams(table.config, options.logger), ...options });
}
