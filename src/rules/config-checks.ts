/**
 * The config checks that span fields (the schema checks one field at a time): unknown or bad
 * entries, windows that would share a store key, key parts a route needs, settings that need others.
 */
import type { ConfigIssue } from '../config/errors.js';
import type { GatewayConfig, LimiterConfig } from '../config/schema.js';
import { patternId } from '../envoy/descriptor-table.js';
import { parseRange } from '../net/client-ip.js';
import { badAddresses } from '../limits/exemption.js';
import { hasTlsSettings, isTlsUrl } from '../store/redis-connection.js';
import type { CompiledLimiter, CompiledRoute } from './model.js';

/** What must hold before compiling: trusted proxies, upstreams, allow and deny lists. */
export function inputIssues(config: GatewayConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  config.identity.trustedProxies.forEach((cidr, i) => {
    try {
      parseRange(cidr);
    } catch (err) {
      issues.push({ path: ['identity', 'trustedProxies', i], message: (err as Error).message });
    }
  });

  for (const [name, upstream] of Object.entries(config.upstreams)) {
    if (!upstream.url && !upstream.embedded) {
      issues.push({
        path: ['upstreams', name, 'url'],
        message: 'set url, or embedded (websites, reports, widget or bulksync) to run a built-in service',
      });
    }
  }
  issues.push(...listIssues(config));
  return issues;
}

/** A limiter's windows that would share one store key, or one descriptor budget. */
export function windowIssues(limiters: ReadonlyMap<string, CompiledLimiter>): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const limiter of limiters.values()) {
    // Two windows with the same period, algorithm and key would share one store key and count each hit twice.
    const ids = limiter.windows.map(
      (w) => `${w.periodMs}:${w.algorithm}${w.calendar ? ':calendar' : ''}:${w.parts.join('+')}`,
    );
    if (new Set(ids).size !== ids.length) {
      issues.push({
        path: ['limiters', limiter.name, 'windows'],
        message: `limiter "${limiter.name}" has two windows with the same period and key`,
      });
    }
    // A descriptor's budget is keyed by its values alone: two windows of one period would share it.
    const periods = limiter.windows.map((w) => w.periodMs);
    if (limiter.descriptors.length > 0 && new Set(periods).size !== periods.length) {
      issues.push({
        path: ['limiters', limiter.name, 'windows'],
        message: `limiter "${limiter.name}" answers descriptors, so its windows need different periods`,
      });
    }
  }
  return issues;
}

/** Settings that need others: jwt keys, Redis TLS, workers, the JWT and tier verifiers. */
export function settingIssues(
  config: GatewayConfig,
  routes: readonly CompiledRoute<unknown>[],
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const route of routes) {
    if (route.parts.has('jwt') && !config.identity.jwt) {
      issues.push({
        path: ['identity'],
        message: `route "${route.name}" has a limiter keyed by jwt, so identity.jwt must be configured`,
      });
    }
  }
  const { redis } = config.store;
  const speaksTls = redis.cluster.length > 0 ? redis.cluster.some(isTlsUrl) : isTlsUrl(redis.url);
  if (hasTlsSettings(redis.tls) && !speaksTls) {
    issues.push({
      path: ['store', 'redis', 'tls'],
      message: 'TLS settings need a rediss:// url (or rediss:// cluster seeds)',
    });
  }
  const sharedStore = config.store.redis.url !== '' || config.store.redis.cluster.length > 0;
  if (config.workers !== 1 && !sharedStore) {
    issues.push({
      path: ['workers'],
      message:
        'more than one worker needs a shared store (store.redis.url or store.redis.cluster): ' +
        'with the in-process store each worker would count on its own',
    });
  }
  const jwt = config.identity.jwt;
  if (jwt && !jwt.secret && !jwt.secretFile && jwt.publicKeys.length === 0 && !jwt.jwksFile) {
    issues.push({
      path: ['identity', 'jwt'],
      message: 'set one of secret, secretFile, publicKeys or jwksFile',
    });
  }
  const tierJwt = config.tiers.jwt;
  if (tierJwt) {
    const own = tierJwt.jwksUrl || tierJwt.jwksFile || tierJwt.publicKeys.length > 0 || tierJwt.secret;
    if (!own && !config.identity.jwt)
      issues.push({
        path: ['tiers', 'jwt'],
        message:
          'set jwksUrl, jwksFile, publicKeys or secret, or configure identity.jwt (the visitor JWT) to read',
      });
    if (tierJwt.jwksUrl && !URL.canParse(tierJwt.jwksUrl))
      issues.push({ path: ['tiers', 'jwt', 'jwksUrl'], message: `not a URL: "${tierJwt.jwksUrl}"` });
  }
  return issues;
}

/**
 * Windows without key parts: allowed only in limiters that answer Envoy's descriptors (keyed by the
 * descriptor's values), and never on a route, where a request's key parts say whose budget it spends.
 */
export function keylessWindows(
  config: GatewayConfig,
  limiters: ReadonlyMap<string, CompiledLimiter>,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const onRoute = new Map<string, string>();
  config.routes.forEach((route, r) =>
    route.limiters.forEach((ref, i) => {
      if (typeof ref === 'string') onRoute.set(ref, route.name);
      else if (ref.windows.some((w) => w.key.length === 0)) {
        const j = ref.windows.findIndex((w) => w.key.length === 0);
        issues.push({
          path: ['routes', r, 'limiters', i, 'windows', j, 'key'],
          message: "required on a route's limiter: the key parts that say whose budget a request spends",
        });
      }
    }),
  );
  for (const [name, cfg] of Object.entries(config.limiters)) {
    const j = cfg.windows.findIndex((w) => w.key.length === 0);
    if (j === -1) continue;
    const route = onRoute.get(name);
    if (route !== undefined || (limiters.get(name)?.descriptors.length ?? 0) === 0) {
      issues.push({
        path: ['limiters', name, 'windows', j, 'key'],
        message:
          route !== undefined
            ? `required: route "${route}" uses this limiter, and its key parts say whose budget a request spends`
            : "required (or descriptors, for Envoy's rate-limit service)",
      });
    }
  }
  return issues;
}

/** Allow and deny entries that are no address or CIDR, in named and inline limiters. */
function listIssues(config: GatewayConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const check = (cfg: Pick<LimiterConfig, 'allow' | 'deny'>, at: (string | number)[]) => {
    for (const list of ['allow', 'deny'] as const) {
      for (const bad of badAddresses(cfg[list]?.addresses ?? []))
        issues.push({ path: [...at, list, 'addresses', bad.index], message: bad.message });
    }
  };
  for (const [name, cfg] of Object.entries(config.limiters)) check(cfg, ['limiters', name]);
  config.routes.forEach((route, r) =>
    route.limiters.forEach((ref, i) => {
      if (typeof ref !== 'string') check(ref, ['routes', r, 'limiters', i]);
    }),
  );
  return issues;
}

/** The same descriptor named by two limiters: the second would never answer. */
export function claimedTwice(limiters: ReadonlyMap<string, CompiledLimiter>): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const owner = new Map<string, string>();
  for (const limiter of limiters.values()) {
    limiter.descriptors.forEach((pattern, d) => {
      const id = patternId(pattern);
      const first = owner.get(id);
      if (first === undefined) owner.set(id, limiter.name);
      else {
        issues.push({
          path: ['limiters', limiter.name, 'descriptors', d],
          message: `limiter "${first}" already answers this descriptor`,
        });
      }
    });
  }
  return issues;
}
