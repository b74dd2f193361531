/**
 * Workspace API tokens are "<id>|<secret>" (the Laravel Sanctum convention): the id names the token,
 * only the secret's SHA-256 is ever stored. The services issue them; the gateway checks them.
 */

/** Where the gateway checks a presented token: a static list, or the services' database. */
export interface WorkspaceTokenStore {
  verify(id: string, secret: string): Promise<boolean>;
  /** What is known of a verified token (its plan, its workspace), for tiers and overrides. */
  facts?(id: string): Promise<TokenFacts | undefined>;
}

/** A token's plan (its tier under tiers.workspaceTokenPlan) and workspace (overrides "workspace:<id>"). */
export interface TokenFacts {
  readonly plan?: string | undefined;
  readonly workspace?: string | undefined;
}

/** Splits "<id>|<secret>"; undefined when the shape is wrong. */
export function parseWorkspaceToken(token: string): { id: string; secret: string } | undefined {
  const bar = token.indexOf('|');
  if (bar <= 0 || bar === token.length - 1) return undefined;
  return { id: token.slice(0, bar), secret: token.slice(bar + 1) };
}

export function formatWorkspaceToken(id: string, secret: string): string {
  return `${id}|${secret}`;
}
