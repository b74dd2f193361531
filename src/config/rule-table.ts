import type { CorsPolicy } from '../cors/policy.js';
import { headersReadBy } from '../identity/resolve.js';
import { Router } from '../routing/router.js';
import { DescriptorTable } from '../envoy/descriptor-table.js';
import type {
  DescriptorPatternConfig,
  FailurePolicy,
  GatewayConfig,
  KeyPart,
  LimiterConfig,
  RouteConfig,
} from './schema.js';

export interface CompiledWindow {
  readonly limit: number;
  readonly periodMs: number;
  readonly parts: readonly KeyPart[];
  /** The constant middle of the window's store key, ":<limiter>:<period>:<parts>", built once. */
  readonly keyStem: string;
  /** The parts whose values follow the stem: all but the limiter's hash-tag part. */
  readonly otherParts: readonly KeyPart[];
}

export interface CompiledLimiter {
  readonly name: string;
  readonly message: string;
  readonly shadow: boolean;
  readonly overLimitCache: boolean;
  readonly onStoreError: FailurePolicy;
  readonly windows: readonly CompiledWindow[];
  /**
   * The key part every window shares (or the first window's first), so a limiter's keys share a
   * cluster slot. Undefined when the windows name no key parts: such a limiter only answers Envoy's
   * descriptors, and the config loader refuses it on a route.
   */
  readonly tagPart: KeyPart | undefined;
  /** The descriptors of Envoy's rate-limit requests it answers (rateLimitService). */
  readonly descriptors: readonly DescriptorPatternConfig[];
}

/** One window of one limiter on a route: precompiled, so a request's plan allocates one array. */
export interface RouteWindow {
  readonly limiter: CompiledLimiter;
  readonly index: number;
  readonly window: CompiledWindow;
  /** The window's name in the IETF RateLimit headers: "<limiter>.<index>". */
  readonly policyName: string;
}

export interface CompiledRoute {
  readonly name: string;
  readonly hosts: readonly string[];
  readonly methods: readonly string[];
  readonly paths: readonly string[];
  readonly upstream: string;
  readonly limiters: readonly CompiledLimiter[];
  readonly windows: readonly RouteWindow[];
  /** The RateLimit-Policy header value of the route's enforced windows ("" when none). */
  readonly ietfPolicy: string;
  /** Every key part this route's limiters need, so identity work is done only when it is used. */
  readonly parts: ReadonlySet<KeyPart>;
  /** Headers the route is matched or keyed by: a Connection header may not name them. */
  readonly identityHeaders: ReadonlySet<string>;
  /** True when some enforcing limiter keys on a credential, which the gateway then requires. */
  readonly requiresJwt: boolean;
  readonly requiresWorkspaceToken: boolean;
  /** Some enforcing limiter answers 503 when the store fails (onStoreError: closed). */
  readonly failsClosed: boolean;
  /** Largest body forwarded, in bytes, read whole before forwarding; 0: streamed unbounded. */
  readonly maxBodySize: number;
  /** The route's CORS policy: the gateway answers its preflights and adds CORS headers to its responses. */
  readonly cors: CorsPolicy | undefined;
  /** The route serves event streams: the upstream's stream pool and the streams caps. */
  readonly stream: boolean;
}

/** The immutable result of compiling a config: what the request path consults. */
export interface RuleTable {
  readonly config: GatewayConfig;
  readonly limiters: ReadonlyMap<string, CompiledLimiter>;
  readonly routes: readonly CompiledRoute[];
  readonly router: Router<CompiledRoute>;
  /** Envoy's descriptors, mapped to the limiters that answer them. */
  readonly descriptors: DescriptorTable;
}

/** A limiter's config; descriptors may be left out (limiters built in code). */
export type LimiterInput = Omit<LimiterConfig, 'descriptors'> & Partial<Pick<LimiterConfig, 'descriptors'>>;

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
  const windows = cfg.windows.map((w) => ({
    limit: w.limit,
    periodMs: w.period,
    parts: w.key,
    keyStem: `:${name}:${w.period}:${w.key.join('+')}`,
    otherParts: w.key.filter((p) => p !== tagPart),
  }));
  return {
    name,
    message: cfg.message,
    shadow: cfg.shadow || globalShadow,
    overLimitCache: cfg.overLimitCache,
    onStoreError: cfg.onStoreError ?? defaultPolicy,
    windows,
    tagPart,
    descriptors: cfg.descriptors ?? [],
  };
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
  if (parts.has('jwt') || parts.has('workspace_token')) parts.add('ip'); // the per-IP fallback key
  const windows = limiters.flatMap((limiter) =>
    limiter.windows.map((window, index) => ({
      limiter,
      index,
      window,
      policyName: `${limiter.name}.${index}`,
    })),
  );
  const ietfPolicy = windows
    .filter((w) => !w.limiter.shadow)
    .map((w) => `"${w.policyName}";q=${w.window.limit};w=${Math.round(w.window.periodMs / 1000)}`)
    .join(', ');
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
