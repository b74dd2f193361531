import type { RuleTable } from '../rules/compile.js';
import type { UpstreamConfig } from '../config/schema.js';
import { VisitorJwtVerifier } from '../credentials/visitor-jwt.js';
import type { WorkspaceTokenStore } from '../credentials/workspace-token.js';
import { TrustedProxies } from '../net/client-ip.js';
import { StaticTokenStore } from '../identity/token-verification.js';
import { UpstreamPool } from '../proxy/upstream-pool.js';
import type { GatewayState } from '../http/state.js';
import type { OverridesView } from '../http/request-tier.js';
import { TierJwtVerifier } from '../identity/tier-credentials.js';
import { OverrideTable } from '../limits/overrides.js';
import type { EmbeddedUpstreams } from './embedded-upstreams.js';
import { destroyPools } from './pool-retirement.js';

export interface StateOptions {
  /** Overrides the token source the config names. */
  readonly workspaceTokens?: WorkspaceTokenStore;
  /**
   * Runs the upstreams that name an embedded service, and holds the token database. Absent (as in
   * `tollgate explain`), embedded upstreams are left out of the state.
   */
  readonly embedded?: EmbeddedUpstreams;
  /** The overrides in force (the runtime's LiveOverrides); absent: none. */
  readonly overrides?: OverridesView;
}

const NO_OVERRIDES: OverridesView = { current: () => OverrideTable.EMPTY };

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
  const built = new Map<string, UpstreamPool>();
  for (const [name, cfg] of Object.entries(upstreams)) {
    if (!cfg.url && !embedded) continue;
    const url = cfg.url || (await embedded!.url(cfg.embedded!));
    built.set(name, reuse(name, cfg) ?? new UpstreamPool(name, { ...cfg, url }));
  }
  return {
    table,
    identity: {
      trustedProxies: new TrustedProxies(identity.trustedProxies),
      ipv6PrefixLength: identity.ipv6PrefixLength,
      jwt,
      workspaceTokens: options.workspaceTokens ?? (await workspaceTokenSource(table, embedded)),
    },
    upstreams: built,
    tiers: {
      jwt: await tierJwt(table, previous),
      workspaceTokenPlan: table.config.tiers.workspaceTokenPlan,
      overrides: options.overrides ?? NO_OVERRIDES,
    },
    // The store is set up at start; a reload must not move every key (and so reset every counter).
    keyPrefix: previous?.keyPrefix ?? store.redis.keyPrefix,
  };
}

/** The tier JWT verifier; the previous state's while its settings are unchanged (a JWKS URL's cache stays). */
async function tierJwt(
  table: RuleTable,
  previous: GatewayState | undefined,
): Promise<TierJwtVerifier | undefined> {
  const cfg = table.config.tiers.jwt;
  if (!cfg) return undefined;
  const same = previous && JSON.stringify(previous.table.config.tiers.jwt) === JSON.stringify(cfg);
  if (same && previous.tiers?.jwt) return previous.tiers.jwt;
  return TierJwtVerifier.create(cfg, table.config.identity.jwt);
}

async function workspaceTokenSource(
  table: RuleTable,
  embedded: EmbeddedUpstreams | undefined,
): Promise<WorkspaceTokenStore> {
  const { workspaceTokens } = table.config.identity;
  if (workspaceTokens.source === 'static') return new StaticTokenStore(workspaceTokens.static);
  if (!embedded) throw new Error('identity.workspaceTokens.source "database" needs the services database');
  return embedded.workspaceTokens();
}

/** The pools of `old` that `next` no longer uses. */
export function retiredPools(old: GatewayState, next: GatewayState): UpstreamPool[] {
  const kept = new Set(next.upstreams.values());
  return [...old.upstreams.values()].filter((u) => !kept.has(u));
}

/** Shutdown, after the drain: see destroyPools. */
export function closeState(state: GatewayState): Promise<void> {
  return destroyPools(state.upstreams.values());
}
