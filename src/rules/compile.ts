/**
 * Compiling a validated config into the rule table (model.ts): the limiters, the routes, the router
 * and Envoy's descriptor table, after the checks that span fields (unknown names here, where the
 * names are resolved; the rest in config-checks.ts).
 */
import type { ConfigIssue } from '../config/errors.js';
import { routeBodyBound } from '../config/body-bound.js';
import { suggestion } from '../config/did-you-mean.js';
import type { FailurePolicy, GatewayConfig, LimiterConfig, RouteConfig } from '../config/schema.js';
import { CALENDAR_PERIODS, DEFAULT_LEASE } from '../config/schema/window.js';
import { compileCorsPolicy, type CorsPolicy } from '../cors/policy.js';
import { DescriptorTable } from '../envoy/descriptor-table.js';
import { headersReadBy } from '../identity/resolve.js';
import { keyStem, routeWindow } from '../limits/keys.js';
import { compileList } from '../limits/exemption.js';
import { CalendarClock } from '../limits/window-maths/calendar.js';
import { Router } from '../routing/router.js';
import { ietfPolicyOf, tieredRouteWindow } from '../limits/tier-choice.js';
import { withTiers } from './tiers.js';
import { claimedTwice, inputIssues, keylessWindows, settingIssues, windowIssues } from './config-checks.js';
import type * as model from './model.js';
import type { Charging, CompiledLimiter, CompiledWindow, KeyPart, LeaseRule } from './model.js';

export type { CompiledLimiter, CompiledWindow, RouteWindow } from './model.js';

/** A compiled route of this gateway: its CORS policy compiled by src/cors/policy.ts. */
export type CompiledRoute = model.CompiledRoute<CorsPolicy>;

/** The rule table of this gateway's config. */
export type RuleTable = model.RuleTable<GatewayConfig, CorsPolicy>;

type WindowConfig = LimiterConfig['windows'][number];

/** A limiter's config; descriptors and a window's algorithm may be left out (limiters built in code). */
export type LimiterInput = Omit<LimiterConfig, 'descriptors' | 'windows' | 'limitedBody'> &
  Partial<Pick<LimiterConfig, 'descriptors' | 'limitedBody'>> & {
    readonly windows: readonly (Omit<WindowConfig, 'algorithm'> & Partial<Pick<WindowConfig, 'algorithm'>>)[];
  };

/** `globalShadow` is the config's global shadow switch: every limiter then counts without refusing. */
export function compileLimiter(
  name: string,
  cfg: LimiterInput,
  defaultPolicy: FailurePolicy,
  globalShadow = false,
): CompiledLimiter {
  const keys = cfg.windows.map((w) => w.key);
  const shared = keys[0]!.find((p) => keys.every((k) => k.includes(p)));
  const tagPart = shared ?? keys[0]![0];
  const windows = cfg.windows.map((w): CompiledWindow => {
    const algorithm = w.algorithm ?? 'fixed';
    const window: CompiledWindow = {
      limit: w.limit,
      periodMs: w.period,
      algorithm,
      burst: algorithm === 'token-bucket' ? (w.burst ?? w.limit) : w.limit,
      parts: w.key,
      keyStem: keyStem(name, w.period, w.key, algorithm, w.align === 'calendar'),
      otherParts: w.key.filter((p) => p !== tagPart),
      ...(w.align === 'calendar' ? { calendar: calendarOf(w) } : {}),
      ...leaseOf(w.lease ?? cfg.lease, algorithm),
    };
    return w.tiers ? withTiers(window, w.tiers) : window;
  });
  return {
    name,
    message: cfg.message,
    limitedBody: cfg.limitedBody ?? 'error',
    shadow: cfg.shadow || globalShadow,
    overLimitCache: cfg.overLimitCache,
    onStoreError: cfg.onStoreError ?? defaultPolicy,
    windows,
    tagPart,
    descriptors: cfg.descriptors ?? [],
    allow: compileList(cfg.allow),
    deny: compileList(cfg.deny),
    ban: cfg.ban && { after: cfg.ban.after, withinMs: cfg.ban.within, forMs: cfg.ban.for },
    ...(chargingOf(cfg, windows) ?? {}),
  };
}

/** [lease] A window's lease (its own, else its limiter's), as a spread: none when off or not fixed. */
function leaseOf(option: LimiterConfig['lease'], algorithm: string): { lease: LeaseRule } | undefined {
  if (!option || algorithm !== 'fixed') return undefined;
  return { lease: option === true ? DEFAULT_LEASE : { max: option.max, spread: option.spread } };
}

const WEEKDAY_NUMBER = {
  monday: 1,
  tuesday: 2,
  wednesday: 3,
  thursday: 4,
  friday: 5,
  saturday: 6,
  sunday: 7,
};

/** A calendar window's clock: its unit, zone and week start (the schema checked the period). */
function calendarOf(w: LimiterInput['windows'][number]): CalendarClock {
  return new CalendarClock({
    unit: CALENDAR_PERIODS.get(w.period) ?? 'day',
    timeZone: w.timeZone ?? 'UTC',
    weekStart: WEEKDAY_NUMBER[w.weekStart ?? 'monday'],
  });
}

/** The limiter's pricing (cost, chargeAfter, countOnly), as a spread: none when it has none. */
function chargingOf(
  cfg: LimiterInput,
  windows: readonly CompiledWindow[],
): { charging: Charging } | undefined {
  const { cost, chargeAfter, countOnly } = cfg;
  if (cost === undefined && chargeAfter === undefined && countOnly === undefined) return undefined;
  const charging: Charging = {
    cost: cost === undefined ? 1 : typeof cost === 'number' ? cost : { perBytes: Math.max(1, cost.per) },
    afterHeader: chargeAfter?.header.toLowerCase(),
    afterMax: chargeAfter?.max ?? Math.max(...windows.map((w) => w.limit)),
    countOnly: countOnly && new Set(countOnly),
    deferred: chargeAfter !== undefined || countOnly !== undefined,
  };
  return { charging };
}

/** `maxBodySize` is the route's effective bound (see routeBodyBound; the config loader passes it). */
export function compileRoute(
  route: RouteConfig,
  limiters: readonly CompiledLimiter[],
  cors?: CorsPolicy,
  maxBodySize = route.maxBodySize ?? 0,
): CompiledRoute {
  const parts = new Set<KeyPart>(limiters.flatMap((l) => l.windows.flatMap((w) => w.parts)));
  const enforcedParts = new Set(
    limiters.filter((l) => !l.shadow).flatMap((l) => l.windows.flatMap((w) => w.parts)),
  );
  // A list naming workspace tokens needs the request's token verified.
  if (limiters.some((l) => l.allow?.namesTokens || l.deny?.namesTokens)) parts.add('workspace_token');
  if (parts.has('jwt') || parts.has('workspace_token')) parts.add('ip'); // the per-IP fallback key
  const windows = limiters.flatMap((limiter) =>
    limiter.windows.map((window, index) => tieredRouteWindow(routeWindow(limiter, index, window))),
  );
  const ietfPolicy = ietfPolicyOf(windows);
  const priced = limiters.filter((l) => l.charging);
  const chargeHeaders = [...new Set(priced.flatMap((l) => l.charging!.afterHeader ?? []))];
  return {
    name: route.name,
    hosts: route.hosts,
    methods: route.methods,
    paths: route.paths,
    upstream: route.upstream,
    limiters,
    windows,
    ietfPolicy,
    parts,
    identityHeaders: headersReadBy(parts),
    requiresJwt: enforcedParts.has('jwt'),
    requiresWorkspaceToken: enforcedParts.has('workspace_token'),
    failsClosed: limiters.some((l) => !l.shadow && l.onStoreError === 'closed'),
    maxBodySize,
    cors,
    stream: route.stream,
    charged: priced.length > 0,
    deferred: priced.some((l) => l.charging!.deferred),
    chargeHeaders,
    tiered: windows.some((w) => w.tiers !== undefined),
  };
}

export function buildRuleTable(
  config: GatewayConfig,
  routes: CompiledRoute[],
  limiters: Map<string, CompiledLimiter>,
) {
  const table: RuleTable = {
    config,
    limiters,
    routes,
    router: new Router(routes),
    descriptors: DescriptorTable.compile(limiters.values()),
  };
  return Object.freeze(table);
}

/** A route's CORS policy: the named one it refers to, or its inline one (named after the route). */
function routeCors(
  ref: GatewayConfig['routes'][number]['cors'],
  policies: ReadonlyMap<string, CorsPolicy>,
  routeName: string,
  r: number,
  issues: ConfigIssue[],
): CorsPolicy | undefined {
  if (ref === undefined) return undefined;
  if (typeof ref !== 'string') return compileCorsPolicy(routeName, ref);
  const found = policies.get(ref);
  if (!found)
    issues.push({
      path: ['routes', r, 'cors'],
      message: `unknown CORS policy "${ref}"${suggestion(ref, [...policies.keys()])}`,
    });
  return found;
}

/** Cross-field checks and compilation into the immutable rule table. */
export function compileConfig(config: GatewayConfig): { table: RuleTable } | { issues: ConfigIssue[] } {
  const issues = inputIssues(config);
  if (issues.length > 0) return { issues }; // a list's bad address would throw when compiled

  const policy = config.store.onError;
  const limiters = new Map<string, CompiledLimiter>();
  for (const [name, cfg] of Object.entries(config.limiters))
    limiters.set(name, compileLimiter(name, cfg, policy, config.shadow));

  const corsPolicies = new Map<string, CorsPolicy>();
  for (const [name, cfg] of Object.entries(config.cors)) corsPolicies.set(name, compileCorsPolicy(name, cfg));

  const routes = config.routes.map((route, r) => {
    if (!(route.upstream in config.upstreams)) {
      issues.push({
        path: ['routes', r, 'upstream'],
        message: `unknown upstream "${route.upstream}"${suggestion(route.upstream, Object.keys(config.upstreams))}`,
      });
    }
    const used = route.limiters.flatMap((ref, i): CompiledLimiter[] => {
      if (typeof ref !== 'string') {
        const name = ref.name ?? `${route.name}#${i}`;
        if (limiters.has(name))
          issues.push({ path: ['routes', r, 'limiters', i, 'name'], message: `duplicate limiter "${name}"` });
        const inline = compileLimiter(name, ref, policy, config.shadow);
        limiters.set(name, inline);
        return [inline];
      }
      const found = limiters.get(ref);
      if (!found)
        issues.push({
          path: ['routes', r, 'limiters', i],
          message: `unknown limiter "${ref}"${suggestion(ref, [...limiters.keys()])}`,
        });
      return found ? [found] : [];
    });
    const cors = routeCors(route.cors, corsPolicies, route.name, r, issues);
    return compileRoute(route, used, cors, routeBodyBound(config, route));
  });

  for (const [r, route] of routes.entries()) {
    const names = route.limiters.map((l) => l.name);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice)
      issues.push({ path: ['routes', r, 'limiters'], message: `limiter "${twice}" is listed twice` });
  }
  issues.push(
    ...windowIssues(limiters),
    ...keylessWindows(config, limiters),
    ...claimedTwice(limiters),
    ...settingIssues(config, routes),
  );
  if (issues.length > 0) return { issues };
  return { table: buildRuleTable(config, routes, limiters) };
}
