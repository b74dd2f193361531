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
  /**
   * What the verified credentials said, for the access log (log.keyParts) and `tollgate replay`:
   * the tier the credential names (the JWT claim, else the token's plan), the workspace token's id
   * and workspace, the JWT's subject. null: checked, and none (or none verified); undefined: not checked.
   */
  readonly named?: string | null | undefined;
  readonly token?: string | null | undefined;
  readonly workspace?: string | null | undefined;
  readonly sub?: string | null | undefined;
}

/** Whether a request on `route` needs a tier chosen at all (else: the route's windows as compiled). */
export const needsTier = (tiers: TierState | undefined, route: CompiledRoute): tiers is TierState =>
  tiers !== undefined &&
  route.windows.length > 0 &&
  (route.tiered === true || !tiers.overrides.current().empty);

/**
 * The request's tier. Synchronous when nothing needs verifying (an address override, a token the
 * counting already verified): a promise only when a credential or a token's facts must be read.
 */
export function requestTier(
  tiers: TierState,
  sources: IdentitySources,
  route: CompiledRoute,
  identity: RequestIdentity,
  headers: IncomingHttpHeaders,
): RequestTier | Promise<RequestTier> {
  const table = tiers.overrides.current();
  const wantsFacts = tiers.workspaceTokenPlan || table.kinds.has('workspace');
  const wantsClaims = tiers.jwt !== undefined && (route.tiered === true || table.kinds.has('sub'));
  const verified = identity.workspaceToken;
  const tokenId = verified?.ok ? verified.id : undefined;
  // A request with no Authorization header carries no token: nothing to verify.
  const verifiesToken =
    verified === undefined && headers.authorization !== undefined && (wantsFacts || table.kinds.has('token'));
  if (!wantsClaims && !verifiesToken && !(wantsFacts && tokenId !== undefined)) {
    return tierOf(
      tiers,
      table,
      route,
      identity,
      headers,
      wantsFacts,
      wantsClaims,
      tokenId,
      undefined,
      undefined,
    );
  }
  return verifyThenTier(tiers, sources, route, identity, headers, table, wantsFacts, wantsClaims);
}

async function verifyThenTier(
  tiers: TierState,
  sources: IdentitySources,
  route: CompiledRoute,
  identity: RequestIdentity,
  headers: IncomingHttpHeaders,
  table: OverrideTable,
  wantsFacts: boolean,
  wantsClaims: boolean,
): Promise<RequestTier> {
  let tokenId: string | undefined;
  if (identity.workspaceToken) tokenId = identity.workspaceToken.ok ? identity.workspaceToken.id : undefined;
  else if (headers.authorization !== undefined && (wantsFacts || table.kinds.has('token'))) {
    const outcome = await verifyWorkspaceToken(headers.authorization, sources.workspaceTokens);
    tokenId = outcome.ok ? outcome.id : undefined;
  }
  const facts =
    tokenId !== undefined && wantsFacts ? await sources.workspaceTokens.facts?.(tokenId) : undefined;
  const claims = wantsClaims ? await tiers.jwt!.claims(headers) : undefined;
  return tierOf(tiers, table, route, identity, headers, wantsFacts, wantsClaims, tokenId, facts, claims);
}

function tierOf(
  tiers: TierState,
  table: OverrideTable,
  route: CompiledRoute,
  identity: RequestIdentity,
  headers: IncomingHttpHeaders,
  wantsFacts: boolean,
  wantsClaims: boolean,
  tokenId: string | undefined,
  facts: { readonly workspace?: string | undefined; readonly plan?: string | undefined } | undefined,
  claims: { readonly sub?: string | undefined; readonly tier?: string | undefined } | undefined,
): RequestTier {
  const override = table.lookup({
    token: tokenId,
    workspace: facts?.workspace,
    sub: claims?.sub,
    ip: identity.clientIp,
  });
  const plan = tiers.workspaceTokenPlan ? facts?.plan : undefined;
  const choice = chooseTier(override, claims?.tier, plan);
  // The token was verified (by counting or here), or there was none to verify.
  const tokenChecked =
    identity.workspaceToken !== undefined ||
    headers.authorization === undefined ||
    wantsFacts ||
    table.kinds.has('token');
  const jwtTier = checked(wantsClaims, claims?.tier);
  return {
    choice,
    windows: choice === DEFAULT_TIER ? route.windows : windowsFor(route.windows, choice),
    // The plan is read whenever tiers.workspaceTokenPlan is on (wantsFacts).
    named: typeof jwtTier === 'string' || !tiers.workspaceTokenPlan ? jwtTier : (plan ?? null),
    token: checked(tokenChecked, tokenId),
    workspace: checked(wantsFacts, facts?.workspace),
    sub: checked(wantsClaims, claims?.sub),
  };
}

/** A value as logged: null when it was checked and there was none, undefined when it was not checked. */
const checked = (wasChecked: boolean, value: string | undefined): string | null | undefined =>
  wasChecked ? (value ?? null) : undefined;

/**
 * log.keyParts: the tier with the workspace the allow and deny lists looked up, when the tier step
 * did not (a route keyed by the workspace token: checked; null for a token that failed).
 */
export function withListedWorkspace(
  tier: RequestTier | undefined,
  route: CompiledRoute,
  identity: RequestIdentity,
  subject: { readonly workspace?: string | undefined },
): RequestTier | undefined {
  if (tier?.workspace !== undefined || identity.workspaceToken === undefined) return tier;
  return {
    ...(tier ?? { choice: DEFAULT_TIER, windows: route.windows }),
    workspace: subject.workspace ?? null,
  };
}
