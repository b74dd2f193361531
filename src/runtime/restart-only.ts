import type { GatewayConfig } from '../config/schema.js';

/**
 * Settings a reload cannot change: they belong to sockets, connections and embedded services
 * opened at start. identity.jwt is among them because the embedded widget signs with the entry the
 * gateway verifies with: the two must not drift apart.
 */
const RESTART_ONLY: readonly (readonly string[])[] = [
  ['listeners'],
  ['admin'],
  ['rateLimitService'],
  ['workers'],
  ['store'],
  ['reload'],
  ['services'],
  ['identity', 'jwt'],
  ['identity', 'workspaceTokens', 'cacheTtl'],
];

const at = (config: object, path: readonly string[]): unknown =>
  path.reduce<unknown>((v, key) => (v as Record<string, unknown> | undefined)?.[key], config);

/** The restart-only fields (dotted) whose value differs between the two configs. */
export function changedRestartOnlyFields(old: GatewayConfig, next: GatewayConfig): string[] {
  return RESTART_ONLY.filter((path) => JSON.stringify(at(old, path)) !== JSON.stringify(at(next, path))).map(
    (path) => path.join('.'),
  );
}
