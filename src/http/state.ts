import type { Logger } from 'pino';
import type { RuleTable } from '../config/rule-table.js';
import { TrustedProxies } from '../identity/client-ip.js';
import type { IdentitySources } from '../identity/resolve.js';
import { VisitorJwtVerifier } from '../identity/visitor-jwt.js';
import { StaticTokenStore, type WorkspaceTokenStore } from '../identity/workspace-token.js';
import { Upstream } from '../proxy/upstream.js';

/** Everything the request path reads, built from one rule table. Replaced whole on reload. */
export interface GatewayState {
  readonly table: RuleTable;
  readonly identity: IdentitySources;
  readonly upstreams: ReadonlyMap<string, Upstream>;
  readonly keyPrefix: string;
}

export interface StateOptions {
  /** Overrides the static tokens of the config (the embedded bulk-sync service supplies its own). */
  readonly workspaceTokens?: WorkspaceTokenStore;
  readonly logger?: Logger;
}

export async function buildState(table: RuleTable, options: StateOptions = {}): Promise<GatewayState> {
  const { identity, upstreams, store } = table.config;
  const jwt = identity.jwt ? await VisitorJwtVerifier.create(identity.jwt) : undefined;
  return {
    table,
    identity: {
      trustedProxies: new TrustedProxies(identity.trustedProxies),
      ipv6PrefixLength: identity.ipv6PrefixLength,
      jwt,
      workspaceTokens: options.workspaceTokens ?? new StaticTokenStore(identity.workspaceTokens.static),
    },
    upstreams: new Map(Object.entries(upstreams).map(([name, cfg]) => [name, new Upstream(name, cfg)])),
    keyPrefix: store.redis.keyPrefix,
  };
}

export async function closeState(state: GatewayState): Promise<void> {
  await Promise.all([...state.upstreams.values()].map((u) => u.close()));
}
