import ms from 'ms';
import type { CanonicalTarget } from '../routing/request-target.js';
import type { CompiledLimiter, CompiledWindow, RuleTable } from '../rules/compile.js';
import type { RequestIdentity } from '../identity/resolve.js';
import { windowKey } from '../limits/plan.js';
import { redactedSeed, redactedUrl } from '../store/redis-connection.js';

/** A window's algorithm, when not the default fixed: " sliding", " token-bucket (burst 20)". */
const algorithmText = (w: CompiledWindow) =>
  w.algorithm === 'fixed' ? '' : w.algorithm === 'sliding' ? ' sliding' : ` token-bucket (burst ${w.burst})`;

export const windowText = (l: CompiledLimiter) =>
  l.windows
    .map(
      (w) =>
        `${w.limit}/${ms(w.periodMs)}${algorithmText(w)}${w.parts.length ? ` by ${w.parts.join('+')}` : ''}`,
    )
    .join(', ');

/** A limiter's Envoy descriptors: "domain [key=value, key=*]". */
const descriptorText = (l: CompiledLimiter) =>
  l.descriptors
    .map((d) => `${d.domain} [${d.entries.map((e) => `${e.key}=${e.value ?? '*'}`).join(', ')}]`)
    .join('; ');

/** The store line: which store, its address with passwords redacted. */
function storeText(store: RuleTable['config']['store']): string {
  if (store.redis.cluster.length > 0) {
    return `redis cluster (${store.redis.cluster.map(redactedSeed).join(', ')})`;
  }
  return store.redis.url ? `redis (${redactedUrl(store.redis.url)})` : 'memory';
}

/** The compiled rule table as text, for `tollgate check`. */
export function describeRuleTable(table: RuleTable): string {
  const lines: string[] = [];
  const { store, listeners, rateLimitService } = table.config;
  lines.push(
    `listeners: ${listeners.map((l) => `${l.name}=${l.host}:${l.port}${l.mode === 'decision' ? ' (decision)' : ''}`).join(', ')}`,
  );
  if (rateLimitService) {
    lines.push(`rate-limit service (Envoy, gRPC): ${rateLimitService.host}:${rateLimitService.port}`);
  }
  lines.push(`store: ${storeText(store)}, on error: ${store.onError}`);
  if (table.config.log.keyParts) lines.push('access log: host and hashed key parts (log.keyParts)');
  lines.push('', 'limiters:');
  for (const l of table.limiters.values()) {
    const flags = [l.shadow ? 'shadow' : '', `on store error: ${l.onStoreError}`].filter(Boolean).join(', ');
    lines.push(`  ${l.name}: ${windowText(l)} (${flags})`, `    message: ${l.message}`);
    if (l.descriptors.length) lines.push(`    descriptors: ${descriptorText(l)}`);
  }
  lines.push('', 'routes (first match wins):');
  table.routes.forEach((r, i) => {
    lines.push(
      `  ${i + 1}. ${r.name}: ${r.methods.join(',')} ${r.paths.join(' ')} on ${r.hosts.join(',')} -> ${r.upstream}`,
      `     limiters: ${r.limiters.length ? r.limiters.map((l) => l.name).join(', ') : '(none)'}`,
    );
    if (r.cors) {
      const origins = r.cors.anyOrigin ? '*' : [...r.cors.origins].join(', ');
      lines.push(`     cors: ${r.cors.name} (origins ${origins}; methods ${r.cors.allowMethods})`);
    }
  });
  return lines.join('\n');
}

/** What `tollgate explain` prints for a request: the route, each window's key parts and store key. */
export function describeRequest(
  table: RuleTable,
  routeName: string | undefined,
  identity: RequestIdentity | undefined,
  keyPrefix: string,
  target?: CanonicalTarget,
): string {
  const route = table.routes.find((r) => r.name === routeName);
  if (!route) return 'route: (none matches: the gateway answers 404)';
  const lines = [`route: ${route.name} -> upstream ${route.upstream}`];
  // A route of named hosts says which (the analyzer host comes from the environment, for one).
  if (!route.hosts.includes('*')) lines.push(`hosts: ${route.hosts.join(', ')}`);
  if (target)
    lines.push(
      target.ok
        ? `forwarded as: ${target.target}`
        : `refused: 400 invalid_request_target (${target.reason}), after counting`,
    );
  if (table.config.log.keyParts) lines.push('access log: host and hashed key parts (log.keyParts)');
  if (route.limiters.length === 0 || !identity)
    return [...lines, 'limiters: (none: not rate limited)'].join('\n');
  lines.push(`client ip: ${identity.clientIp}`);
  if (identity.jwt)
    lines.push(`visitor jwt: ${identity.jwt.ok ? 'valid' : `${identity.jwt.reason} (per-IP fallback key)`}`);
  if (identity.workspaceToken) {
    const t = identity.workspaceToken;
    lines.push(`workspace token: ${t.ok ? `valid, id ${t.id}` : `${t.reason} (per-IP fallback key)`}`);
  }
  for (const l of route.limiters) {
    lines.push(`limiter ${l.name}${l.shadow ? ' (shadow)' : ''}:`);
    l.windows.forEach((w, i) => {
      lines.push(`  ${w.limit} per ${ms(w.periodMs, { long: true })}${algorithmText(w)}, key parts:`);
      for (const p of w.parts) lines.push(`    ${p} = ${identity.raw?.get(p)} -> ${identity.hashed.get(p)}`);
      lines.push(`    store key: ${windowKey(keyPrefix, l, i, (p) => identity.hashed.get(p)!)}`);
    });
  }
  return lines.join('\n');
}
