import ms from 'ms';
import type { CanonicalTarget } from '../routing/request-target.js';
import type { CompiledLimiter, RuleTable } from '../config/rule-table.js';
import type { RequestIdentity } from '../identity/resolve.js';
import { windowKey } from '../limits/plan.js';

const windowText = (l: CompiledLimiter) =>
  l.windows.map((w) => `${w.limit}/${ms(w.periodMs)} by ${w.parts.join('+')}`).join(', ');

/** The compiled rule table as text, for `tollgate check`. */
export function describeRuleTable(table: RuleTable): string {
  const lines: string[] = [];
  const { store, listeners } = table.config;
  lines.push(`listeners: ${listeners.map((l) => `${l.name}=${l.host}:${l.port}`).join(', ')}`);
  lines.push(
    `store: ${store.redis.url ? `redis (${redactUrl(store.redis.url)})` : 'memory'}, on error: ${store.onError}`,
  );
  lines.push('', 'limiters:');
  for (const l of table.limiters.values()) {
    const flags = [l.shadow ? 'shadow' : '', `on store error: ${l.onStoreError}`].filter(Boolean).join(', ');
    lines.push(`  ${l.name}: ${windowText(l)} (${flags})`, `    message: ${l.message}`);
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
  if (target)
    lines.push(
      target.ok
        ? `forwarded as: ${target.target}`
        : `refused: 400 invalid_request_target (${target.reason}), after counting`,
    );
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
      lines.push(`  ${w.limit} per ${ms(w.periodMs, { long: true })}, key parts:`);
      for (const p of w.parts) lines.push(`    ${p} = ${identity.raw.get(p)} -> ${identity.hashed.get(p)}`);
      lines.push(`    store key: ${windowKey(keyPrefix, l, i, (p) => identity.hashed.get(p)!)}`);
    });
  }
  return lines.join('\n');
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}
