import ms from 'ms';
import type { CanonicalTarget } from '../routing/request-target.js';
import type { CompiledLimiter, CompiledWindow, RuleTable } from '../rules/compile.js';
import type { RequestIdentity } from '../identity/resolve.js';
import type { RequestTier } from '../http/request-tier.js';
import { windowKey } from '../limits/plan.js';
import { banKeys } from '../limits/keys.js';
import { listVerdict } from '../limits/exemption.js';
import type { ListSubject } from '../rules/model.js';
import { partitionKey } from '../limits/rate-limit-headers.js';
import { redactedSeed, redactedUrl } from '../store/redis-connection.js';

/** A window's algorithm, when not the default fixed: " sliding", " token-bucket (burst 20)". */
const algorithmText = (w: CompiledWindow) =>
  w.algorithm === 'fixed' ? '' : w.algorithm === 'sliding' ? ' sliding' : ` token-bucket (burst ${w.burst})`;

/** [lease] A leased window: " leased (slices ≤ 1000, ≤ 1/(4 × instances) of what remains)". */
const leaseText = (w: CompiledWindow) =>
  w.lease ? ` leased (slices ≤ ${w.lease.max}, ≤ 1/(${w.lease.spread} × instances) of what remains)` : '';

const WEEKDAY = ['', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

/** A calendar window's period: "calendar day (UTC)", "calendar week from sunday (Europe/Berlin)". */
const calendarText = (w: CompiledWindow) => {
  const { unit, timeZone, weekStart } = w.calendar!.spec;
  return `calendar ${unit}${unit === 'week' && weekStart !== 1 ? ` from ${WEEKDAY[weekStart]}` : ''} (${timeZone})`;
};

/** The period: "1h", or a calendar window's. */
const periodText = (w: CompiledWindow) => (w.calendar ? calendarText(w) : ms(w.periodMs));
/** A window's tiers: " [tiers: free 10, pro 100 (burst 200)]". */
const tiersText = (w: CompiledWindow) =>
  w.tiers
    ? ` [tiers: ${[...w.tiers]
        .map(([n, t]) => `${n} ${t.limit}${t.algorithm === 'token-bucket' ? ` (burst ${t.burst})` : ''}`)
        .join(', ')}]`
    : '';

export const windowText = (l: CompiledLimiter) =>
  l.windows
    .map(
      (w) =>
        `${w.limit}/${periodText(w)}${algorithmText(w)}${w.parts.length ? ` by ${w.parts.join('+')}` : ''}${tiersText(w)}${leaseText(w)}`,
    )
    .join(', ');

/** A limiter's pricing: "cost 5", "cost content-length ÷ 1024B", "charged after: x-cost (max 50)", "counted only for 401". */
export function chargingText(l: CompiledLimiter): string | undefined {
  const c = l.charging;
  if (!c) return undefined;
  const parts: string[] = [];
  if (c.afterHeader !== undefined)
    parts.push(`charged after the response: ${c.afterHeader} header (max ${c.afterMax})`);
  else
    parts.push(
      typeof c.cost === 'number' ? `cost ${c.cost}` : `cost content-length ÷ ${c.cost.perBytes}B, rounded up`,
    );
  if (c.countOnly) parts.push(`counted only for statuses ${[...c.countOnly].join(', ')}`);
  if (c.deferred) parts.push('checked before forwarding, counted after the response');
  return parts.join('; ');
}

/** How a request's tier is chosen (config `tiers`), for `tollgate check`. */
function tierSourcesText(tiers: RuleTable['config']['tiers']): string {
  const from = ['override'];
  if (tiers.jwt) {
    const j = tiers.jwt;
    const keys = j.jwksUrl
      ? `JWKS ${j.jwksUrl}`
      : j.jwksFile
        ? `JWKS file ${j.jwksFile}`
        : j.publicKeys.length
          ? `keys ${j.publicKeys.join(', ')}`
          : j.secret
            ? 'a secret'
            : '';
    from.push(
      keys
        ? `claim "${j.claim}" of the bearer JWT (verified with ${keys})`
        : `claim "${j.claim}" of the visitor JWT`,
    );
  }
  if (tiers.workspaceTokenPlan) from.push("the workspace token's plan");
  from.push('default');
  const file = tiers.overrides.file ? `file ${tiers.overrides.file}, ` : '';
  return `tiers: ${from.join(', then ')}; overrides: ${file}admin API (store, polled every ${ms(tiers.overrides.pollInterval)})`;
}

/** The tier line of `tollgate explain`. */
function tierText(tier: RequestTier): string {
  const { choice } = tier;
  const o = choice.override;
  if (o) {
    const a = o.action;
    const what =
      'tier' in a
        ? `tier ${a.tier}`
        : 'unlimited' in a
          ? 'unlimited'
          : `limit ${a.limit}${a.burst ? ` (burst ${a.burst})` : ''}`;
    return `tier: ${what} (override ${o.key})`;
  }
  if (choice.tier === undefined) return 'tier: default (no tier named)';
  return `tier: ${choice.tier} (from ${choice.source === 'jwt' ? 'the JWT claim' : "the workspace token's plan"})`;
}

/** A limiter's Envoy descriptors: "domain [key=value, key=*]". */
const descriptorText = (l: CompiledLimiter) =>
  l.descriptors
    .map((d) => `${d.domain} [${d.entries.map((e) => `${e.key}=${e.value ?? '*'}`).join(', ')}]`)
    .join('; ');

/** A limiter's allow and deny lists and ban, as check and explain show them. */
function listLines(l: CompiledLimiter, indent: string): string[] {
  const lines: string[] = [];
  if (l.allow) lines.push(`${indent}allow: ${l.allow.text}`);
  if (l.deny) lines.push(`${indent}deny: ${l.deny.text}`);
  if (l.ban) {
    const { after, withinMs, forMs } = l.ban;
    const shadow = l.shadow ? ' (shadow: never applied)' : '';
    lines.push(`${indent}ban: after ${after} refusals within ${ms(withinMs)}, for ${ms(forMs)}${shadow}`);
  }
  return lines;
}

/** The access log's client field when not the address in full (log.clientAddress). */
const clientAddressText = (mode: 'hashed' | 'none') =>
  mode === 'hashed'
    ? 'access log: client address hashed (log.clientAddress)'
    : 'access log: no client address (log.clientAddress)';

/** The store line: which store, its address with passwords redacted. */
function storeText(store: RuleTable['config']['store']): string {
  if (store.redis.cluster.length > 0) {
    return `redis cluster (${store.redis.cluster.map(redactedSeed).join(', ')})${batchWindowText(store)}`;
  }
  if (!store.redis.url) return 'memory';
  return `redis (${redactedUrl(store.redis.url)})${batchWindowText(store)}${batchesInFlightText(store)}`;
}

/** Shown only when set, so the summary of configs without it is unchanged. */
const batchWindowText = (store: RuleTable['config']['store']): string =>
  store.redis.batchWindow > 0 ? `, batch window ${store.redis.batchWindow}ms` : '';

/** Shown only when not the default (one call out at a time). */
const batchesInFlightText = (store: RuleTable['config']['store']): string => {
  const n = store.redis.batchesInFlight;
  if (n === 1) return '';
  return n === 0 ? ', batches in flight unbounded' : `, ${n} batches in flight`;
};

/** A listener's address and what it does: mode, onLimited, TLS, HTTP/2, mTLS, IETF headers. */
function listenerText(l: RuleTable['config']['listeners'][number]): string {
  const tls = l.tls ? `TLS (${l.tls.minVersion}+)` : 'TLS off';
  const h2 = !l.tls ? 'HTTP/2 off (needs TLS)' : l.http2.enabled ? 'HTTP/2 on' : 'HTTP/2 off';
  const mtls = l.tls?.ca ? `mTLS (${l.tls.ca})` : 'mTLS off';
  const ietf = l.ietfHeaders ? ', IETF headers' : '';
  return `${l.host}:${l.port}, mode ${l.mode}, onLimited ${l.onLimited}, ${tls}, ${h2}, ${mtls}${ietf}`;
}

/** The compiled rule table as text, for `tollgate check`. */
export function describeRuleTable(table: RuleTable): string {
  const lines: string[] = [];
  const { store, listeners, rateLimitService } = table.config;
  lines.push('listeners:', ...listeners.map((l) => `  ${l.name}: ${listenerText(l)}`));
  if (rateLimitService) {
    lines.push(`rate-limit service (Envoy, gRPC): ${rateLimitService.host}:${rateLimitService.port}`);
  }
  lines.push(`store: ${storeText(store)}, on error: ${store.onError}`);
  const { tiers } = table.config;
  // Shown once tiers are in use, so the output of configs without them is unchanged.
  if (table.routes.some((r) => r.tiered) || tiers.jwt || tiers.workspaceTokenPlan || tiers.overrides.file)
    lines.push(tierSourcesText(tiers));
  if (table.config.log.keyParts) lines.push('access log: host and hashed key parts (log.keyParts)');
  if (table.config.log.clientAddress !== 'full')
    lines.push(clientAddressText(table.config.log.clientAddress));
  lines.push('', 'limiters:');
  for (const l of table.limiters.values()) {
    const onError = l.onStoreError === 'local' ? 'local (limit ÷ live instances)' : l.onStoreError;
    const flags = [
      l.shadow ? 'shadow' : '',
      `on store error: ${onError}`,
      l.limitedBody === 'problem' ? '429 body: problem+json' : '',
    ]
      .filter(Boolean)
      .join(', ');
    lines.push(`  ${l.name}: ${windowText(l)} (${flags})`, `    message: ${l.message}`);
    if (l.descriptors.length) lines.push(`    descriptors: ${descriptorText(l)}`);
    lines.push(...listLines(l, '    '));
    const charging = chargingText(l);
    if (charging) lines.push(`    charging: ${charging}`);
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
  subject?: ListSubject,
  tier?: RequestTier,
  /** The answer lines (explain-answer.ts): they replace the target's line. */
  answer?: readonly string[],
): string {
  const route = table.routes.find((r) => r.name === routeName);
  if (!route) return 'route: (none matches: the gateway answers 404)';
  const lines = [`route: ${route.name} -> upstream ${route.upstream}`];
  // A route of named hosts says which (the analyzer host comes from the environment, for one).
  if (!route.hosts.includes('*')) lines.push(`hosts: ${route.hosts.join(', ')}`);
  if (answer) lines.push(...answer);
  else if (target)
    lines.push(
      target.ok
        ? `forwarded as: ${target.target}`
        : `refused: 400 invalid_request_target (${target.reason}), after counting`,
    );
  if (table.config.log.keyParts) lines.push('access log: host and hashed key parts (log.keyParts)');
  if (table.config.log.clientAddress !== 'full')
    lines.push(clientAddressText(table.config.log.clientAddress));
  if (route.limiters.length === 0 || !identity)
    return [...lines, 'limiters: (none: not rate limited)'].join('\n');
  lines.push(`client ip: ${identity.clientIp}`);
  if (identity.jwt)
    lines.push(`visitor jwt: ${identity.jwt.ok ? 'valid' : `${identity.jwt.reason} (per-IP fallback key)`}`);
  if (identity.workspaceToken) {
    const t = identity.workspaceToken;
    lines.push(`workspace token: ${t.ok ? `valid, id ${t.id}` : `${t.reason} (per-IP fallback key)`}`);
  }
  if (tier) lines.push(tierText(tier));
  for (const l of route.limiters) {
    const body = l.limitedBody === 'problem' ? ' (429 body: problem+json)' : '';
    lines.push(`limiter ${l.name}${l.shadow ? ' (shadow)' : ''}${body}:`);
    lines.push(...listLines(l, '  '));
    const verdict = subject && (l.allow || l.deny) ? listVerdict(l, subject) : undefined;
    if (verdict === 'denied')
      lines.push(
        `  this request: denied (${l.shadow ? 'shadow: not refused' : '403 denied, not forwarded'})`,
      );
    else if (verdict === 'exempt') lines.push('  this request: exempt (allow list: not counted)');
    if (l.ban && !l.shadow) {
      const tag = identity.hashed.get(l.tagPart!)!;
      lines.push(
        `  ban key: ${banKeys(keyPrefix, l.name, tag).key} (lift: DELETE /v1/bans/${l.name}/${tag})`,
      );
    }
    const charging = chargingText(l);
    if (charging) lines.push(`  charging: ${charging}`);
    l.windows.forEach((compiled, i) => {
      const atTier = tier?.windows.find((rw) => rw.limiter === l && rw.index === i)?.window;
      if (tier && !atTier) {
        lines.push(
          `  ${compiled.limit} per ${ms(compiled.periodMs, { long: true })}: not counted (unlimited)`,
        );
        return;
      }
      const w = atTier ?? compiled;
      const per = w.calendar ? calendarText(w) : ms(w.periodMs, { long: true });
      lines.push(`  ${w.limit} per ${per}${algorithmText(w)}${leaseText(w)}, key parts:`);
      if (w.calendar) {
        const { startMs, endMs } = w.calendar.periodAt(Date.now());
        lines.push(`    period: ${new Date(startMs).toISOString()} to ${new Date(endMs).toISOString()}`);
      }
      for (const p of w.parts) lines.push(`    ${p} = ${identity.raw?.get(p)} -> ${identity.hashed.get(p)}`);
      const key = windowKey(keyPrefix, l, i, (p) => identity.hashed.get(p)!);
      lines.push(`    store key: ${key}`, `    pk (IETF RateLimit): ${partitionKey(key)}`);
    });
    if (l.onStoreError === 'local')
      lines.push('  store lost: counted in this process at floor(limit ÷ live instances), at least 1');
  }
  return lines.join('\n');
}
