import { createHash } from 'node:crypto';

/** A short, stable digest of a key part, so raw tokens, user agents and addresses never reach the store or logs. */
export function hashPart(value: string): string {
  return createHash('sha256').update(value).digest('base64url').slice(0, 22);
}
