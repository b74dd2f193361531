import { createHash } from 'node:crypto';

/** The SHA-256 digest of a secret (API keys and workspace-token secrets are stored as this, never in clear). */
export function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** The same digest in hex, as a static workspace token lists it in the config. */
export function sha256Hex(value: string): string {
  return sha256(value).toString('hex');
}
