/**
 * Workspace API tokens are "<id>|<secret>" (the Laravel Sanctum convention): the id names the token,
 * only the secret's SHA-256 is ever stored. The services issue them; the gateway checks them.
 */

/** Where the gateway checks a presented token: a static list, or the services' database. */
export interface WorkspaceTokenStore {
  verify(id: string, secret: string): Promise<boolean>;
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
