import type { IdentitySources } from '../identity/resolve.js';
import type { UpstreamPool } from '../proxy/upstream-pool.js';
import type { RuleTable } from '../rules/compile.js';
import type { TierState } from './request-tier.js';

/**
 * Everything the request path reads, built from one rule table. Replaced whole on reload: the
 * process builds it (src/runtime/build-state.ts) and swaps it in (src/runtime/live-state.ts).
 */
export interface GatewayState {
  readonly table: RuleTable;
  readonly identity: IdentitySources;
  /** The forwarding pool of each config upstream, by name. */
  readonly upstreams: ReadonlyMap<string, UpstreamPool>;
  readonly keyPrefix: string;
  /** The tier sources and overrides (config `tiers`); absent in states built without them. */
  readonly tiers?: TierState;
}
