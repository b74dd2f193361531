/**
 * Choosing a request's tier before it is counted: the credentials the tier sources and the
 * overrides in use need are verified (each only when needed), the override looked up, and the
 * route's windows taken at the chosen tier (src/limits/tier-choice.ts).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { RouteWindow } from '../rules/model.js';
import type { CompiledRoute } from '../rules/compile.js';
import type { IdentitySources, RequestIdentity } from '../identity/resolve.js';
import type { TierJwtVerifier } from '../identity/tier-credentials.js';
import { verifyWorkspaceToken } from '../identity/token-verification.js';
import type { OverrideTable } from '../limits/overrides.js';
import { chooseTier, DEFAULT_TIER, windowsFor, type TierChoice } from '../limits/tier-choice.js';

/** The overrides in force now (the file's and the admin API's, merged; swapped when either changes). */
export interface OverridesView {
  current(): OverrideTable;
}

/** The tier sources of the config (`tiers`), built with the state. */
export interface TierState {
  readonly jwt: TierJwtVerifier | undefined;
  readonly workspaceTokenPlan: boolean;
  readonly overrides: OverridesView;
}

export interface RequestTier {
  readonly choice: TierChoice;
  /** The route's windows at that tier: none when an override says unlimited. */
  readonly windows: readonly RouteWindow[];
}

/** Whether a request on `route` needs a tier chosen at all (else: the route's windows as compiled). */
export const needsTier = (tiers: TierState | undefined, route: CompiledRoute): tiers is TierState =>
  tiers !== undefined &&
  route.windows.length > 0 &&
  (route.tiered === true || !tiers.overrides.current().empty);

export async function requestTier(
  tiers: TierState,
  sources: IdentitySources,
  route: CompiledRoute,
  identity: RequestIdentity,
  headers: IncomingHttpHeaders,
): Promise<RequestTier> {
  const table = tiers.overrides.current();
  const wantsFacts = tiers.workspaceTokenPlan || table.kinds.has('workspace');
  let tokenId: string | undefined;
  if (identity.workspaceToken) tokenId = identity.workspaceToken.ok ? identity.workspaceToken.id : undefined;
  else if (wantsFacts || table.kinds.has('token')) {
    const auth = headers.authorization;
    const outcome = await verifyWorkspaceToken(auth, sources.workspaceTokens);
    tokenId = outcome.ok ? outcome.id : undefined;
  }
  const facts =
    tokenId !== undefined && wantsFacts ? await sources.workspaceTokens.facts?.(tokenId) : undefined;
  const claims =
    tiers.jwt && (route.tiered === true || table.kinds.has('sub'))
      ? await tiers.jwt.claims(headers)
      : undefined;
  const override = table.lookup({
    token: tokenId,
    workspace: facts?.workspace,
    sub: claims?.sub,
    ip: identity.clientIp,
  });
  const choice = chooseTier(override, claims?.tier, tiers.workspaceTokenPlan ? facts?.plan : undefined);
  return { choice, windows: choice === DEFAULT_TIER ? route.windows : windowsFor(route.windows, choice) };
}
