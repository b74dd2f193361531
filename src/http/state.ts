import type { Logger } from 'pino';
import type { RuleTable } from '../config/rule-table.js';
import type { UpstreamConfig } from '../config/schema.js';
import { TrustedProxies } from '../identity/client-ip.js';
import type { IdentitySources } from '../identity/resolve.js';
import { VisitorJwtVerifier } from '../identity/visitor-jwt.js';
import { StaticTokenStore, type WorkspaceTokenStore } from '../identity/workspace-token.js';
import { Upstream } from '../proxy/upstream.js';
import type { EmbeddedServices } from '../services/embedded.js';

/** Everything the request path reads, built from one rule table. Replaced whole on reload. */
export interface GatewayState {
  readonly table: RuleTable;
  readonly identity: IdentitySources;
  readonly upstreams: ReadonlyMap<string, Upstream>;
  readonly keyPrefix: string;
}

export interface StateOptions {
  /** Overrides the token source the config names. */
  readonly workspaceTokens?: WorkspaceTokenStore;
  /**
   * Runs the upstreams that name an embedded service, and holds the token database. Absent (as in
   * `tollgate explain`), embedded upstreams are left out of the state.
   */
  readonly embedded?: EmbeddedServices;
  readonly logger?: Logger;
}

/**
 * Builds the request path's state from a rule table. Upstreams whose settings did not change are
 * taken over from `previous` (their pools and keep-alive connections carry on across a reload).
 */
export async function buildState(
  table: RuleTable,
  options: StateOptions = {},
  previous?: GatewayState,
): Promise<GatewayState> {
  const { identity, upstreams, store } = table.config;
  const reuse = (name: string, cfg: UpstreamConfig) => {
    const old = previous?.upstreams.get(name);
    return old && JSON.stringify(previous!.table.config.upstreams[name]) === JSON.stringify(cfg)
      ? old
      : undefined;
  };
  // identity.jwt changes only on restart (the embedded widget signs with the start-up entry).
  const jwt = previous
    ? previous.identity.jwt
    : identity.jwt
      ? await VisitorJwtVerifier.create(identity.jwt)
      : undefined;
  const { embedded } = options;
  const built = new Map<string, Upstream>();
  for (const [name, cfg] of Object.entries(upstreams)) {
    if (!cfg.url && !embedded) continue;
    const url = cfg.url || (await embedded!.url(cfg.embedded!));
    built.set(name, reuse(name, cfg) ?? new Upstream(name, { ...cfg, url }));
  }
  return {
    table,
    identity: {
      trustedProxies: new TrustedProxies(identity.trustedProxies),
      ipv6PrefixLength: identity.ipv6PrefixLength,
      jwt,
      workspaceTokens: options.workspaceTokens ?? workspaceTokenSource(table, embedded),
    },
    upstreams: built,
    // The store is set up at start; a reload must not move every key (and so reset every counter).
    keyPrefix: previous?.keyPrefix ?? store.redis.keyPrefix,
  };
}

function workspaceTokenSource(table: RuleTable, embedded: EmbeddedServices | undefined): WorkspaceTokenStore {
  const { workspaceTokens } = table.config.identity;
  if (workspaceTokens.source === 'static') return new StaticTokenStore(workspaceTokens.static);
  if (!embedded) throw new Error('identity.workspaceTokens.source "database" needs the services database');
  return embedded.tokenStore();
}

/** The upstreams of `old` that `next` no longer uses. */
export function retiredUpstreams(old: GatewayState, next: GatewayState): Upstream[] {
  const kept = new Set(next.upstreams.values());
  return [...old.upstreams.values()].filter((u) => !kept.has(u));
}

export async function closeUpstreams(upstreams: Iterable<Upstream>): Promise<void> {
  await Promise.all([...upstreams].map((u) => u.close()));
}

export async function closeState(state: GatewayState): Promise<void> {
  await closeUpstreams(state.upstreams.values());
}
