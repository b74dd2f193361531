/**
 * The compiled rules: what the request path and Envoy's rate-limit service consult, made once per
 * config by compile.ts. Types only, and nothing of the project: the router and the descriptor
 * matcher are the small interfaces the request path calls, so this file sits below every folder.
 */

/**
 * A window's key part (config `windows[].key`): ip, user_agent, jwt, workspace_token or
 * header:<Name>, as the config schema validates it.
 */
export type KeyPart = string;

/**
 * What a limiter does when the store fails: `open` lets the request through, `closed` answers 503,
 * `local` counts in process at the limit divided by the live instances (src/store/local-fallback.ts).
 */
export type FailurePolicy = 'open' | 'closed' | 'local';

/** An Envoy descriptor a limiter answers: its domain and entries, a missing value meaning any value. */
export interface DescriptorPattern {
  readonly domain: string;
  readonly entries: readonly { readonly key: string; readonly value?: string | undefined }[];
}

/** How a window counts: see docs/limiting.md and src/limits/window-maths/. */
export type WindowAlgorithm = 'fixed' | 'sliding' | 'token-bucket';

/** A calendar window's periods (config align: calendar; src/limits/window-maths/calendar.ts). */
export interface CalendarPeriods {
  readonly spec: {
    readonly unit: 'day' | 'week' | 'month';
    readonly timeZone: string;
    readonly weekStart: number;
  };
  /** The period holding `nowMs`: [startMs, endMs). */
  periodAt(nowMs: number): { readonly startMs: number; readonly endMs: number };
}

/**
 * How a limiter prices a request (config cost, chargeAfter, countOnly; docs/limiting.md#weighted-cost).
 * A limiter without one charges 1 hit, counted at once.
 */
export interface Charging {
  /** Hits per request: a number, or the body's declared size ÷ `perBytes`, rounded up, at least 1. */
  readonly cost: number | { readonly perBytes: number };
  /** chargeAfter: the response header (lower case) whose value is charged, and the most it charges. */
  readonly afterHeader: string | undefined;
  readonly afterMax: number;
  /** countOnly: only responses with these statuses are counted. */
  readonly countOnly: ReadonlySet<number> | undefined;
  /** chargeAfter or countOnly: checked for room before forwarding, counted after the response. */
  readonly deferred: boolean;
}

export interface CompiledWindow {
  /** Hits per period (token-bucket: tokens that come back per period). */
  readonly limit: number;
  readonly periodMs: number;
  readonly algorithm: WindowAlgorithm;
  /** token-bucket: what the bucket holds (config burst, or limit); otherwise the limit. */
  readonly burst: number;
  readonly parts: readonly KeyPart[];
  /** The constant middle of the window's store key, ":<limiter>:<period>[<algorithm>]:<parts>", built once. */
  readonly keyStem: string;
  /** The parts whose values follow the stem: all but the limiter's hash-tag part. */
  readonly otherParts: readonly KeyPart[];
  /** align: calendar: the window resets at calendar boundaries (its key ends with the period's start). */
  readonly calendar?: CalendarPeriods | undefined;
  /** Config `tiers`: the window as each named tier sees it (same key, its own limit and burst). */
  readonly tiers?: ReadonlyMap<string, CompiledWindow>;
  /** Config `lease` (fixed windows): instances spend leased slices of the budget in process. */
  readonly lease?: LeaseRule | undefined;
}

/** A window's lease (config `lease`; src/limits/window-maths/lease.ts, src/store/leasing-store.ts). */
export interface LeaseRule {
  /** The largest slice an instance takes at once. */
  readonly max: number;
  /** An instance takes at most 1 ÷ (spread × live instances) of what remains. */
  readonly spread: number;
}

/**
 * A request as allow and deny lists see it (src/limits/exemption.ts): its client address, parsed
 * (an ipaddr.js address of src/net/client-ip.ts), and its verified workspace-token id.
 */
export interface ListSubject {
  readonly address: { kind(): 'ipv4' | 'ipv6' } | undefined;
  readonly token: string | undefined;
  /** The workspace of the verified token; read only when some list names workspaces. */
  readonly workspace?: string | undefined;
}

/** A compiled allow or deny list (config `allow`, `deny`). */
export interface RequestList {
  matches(subject: ListSubject): boolean;
  /** The list as `tollgate check` shows it. */
  readonly text: string;
  /** Whether it names workspace tokens or workspaces (the route then verifies the token). */
  readonly namesTokens: boolean;
  /** Whether it names workspaces (the token's workspace is then looked up). */
  readonly namesWorkspaces: boolean;
}

/** A limiter's penalty box (config `ban`): `after` refusals within `withinMs` ban the key for `forMs`. */
export interface BanRule {
  readonly after: number;
  readonly withinMs: number;
  readonly forMs: number;
}

export interface CompiledLimiter {
  readonly name: string;
  readonly message: string;
  /** The 429 body: the error shape (absent: error), or application/problem+json (http/responses.ts). */
  readonly limitedBody?: 'error' | 'problem';
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
  readonly descriptors: readonly DescriptorPattern[];
  /** Requests it lets by without counting (decision exempt); deny: those it answers 403. */
  readonly allow?: RequestList | undefined;
  readonly deny?: RequestList | undefined;
  /** The penalty box; absent: none (never on a shadow limiter's refusals). */
  readonly ban?: BanRule | undefined;
  /** cost, chargeAfter, countOnly; undefined: 1 hit, counted at once. */
  readonly charging?: Charging | undefined;
}

/** One window of one limiter on a route: precompiled, so a request's plan allocates one array. */
export interface RouteWindow {
  readonly limiter: CompiledLimiter;
  readonly index: number;
  readonly window: CompiledWindow;
  /** The window's name in the IETF RateLimit headers: "<limiter>.<index>". */
  readonly policyName: string;
  /** The same window for each tier it names (src/rules/tiers.ts); absent when it names none. */
  readonly tiers?: ReadonlyMap<string, RouteWindow>;
}

/**
 * A compiled route. `Cors` is the route's CORS policy type (src/cors/policy.ts), a parameter so
 * this file needs nothing of the CORS folder.
 */
export interface CompiledRoute<Cors = unknown> {
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
  readonly cors: Cors | undefined;
  /** The route serves event streams: the upstream's stream pool and the streams caps. */
  readonly stream: boolean;
  /** Some limiter prices requests (charging): counting takes the longer way. */
  readonly charged?: boolean;
  /** Some limiter counts after the response; the chargeAfter headers, stripped from the response. */
  readonly deferred?: boolean;
  readonly chargeHeaders?: readonly string[];
  /** Some window of the route names tiers: the request's tier is chosen before counting. */
  readonly tiered?: boolean;
}

/** A route that answers CORS preflights. */
export type CorsRoute<R extends { readonly cors?: unknown }> = R & { readonly cors: NonNullable<R['cors']> };

/** Matching a request to its route (src/routing/router.ts). */
export interface RouteMatcher<R extends { readonly cors?: unknown }> {
  /** The route of a raw request target (canonicalised first). */
  match(hostHeader: string | undefined, method: string, url: string): R | undefined;
  /** The route of a path already in match form (`CanonicalTarget.matchPath`). */
  matchPath(hostHeader: string | undefined, method: string, path: string): R | undefined;
  /** matchPath without its memo (for paths that seldom repeat: replay's logs). */
  scanPath(hostHeader: string | undefined, method: string, path: string): R | undefined;
  /** The route of a CORS preflight whose real request would take a route with CORS. */
  matchPreflight(
    hostHeader: string | undefined,
    requestedMethod: string,
    path: string,
  ): CorsRoute<R> | undefined;
}

/** One entry of a descriptor as Envoy sends it. */
export interface DescriptorEntry {
  readonly key: string;
  readonly value: string;
}

/** A descriptor some limiter answers: that limiter, and the (hashed) budget the descriptor spends. */
export interface DescriptorMatch {
  readonly limiter: CompiledLimiter;
  /** The hash of the values of the pattern's any-value entries: whose budget, and the cluster hash tag. */
  readonly tag: string;
}

/** Envoy's descriptors mapped to the limiters that answer them (src/envoy/descriptor-table.ts). */
export interface DescriptorMatcher {
  /** Whether any limiter answers descriptors at all. */
  readonly empty: boolean;
  /** The limiter answering this descriptor, with its budget's tag; undefined when none does. */
  match(domain: string, entries: readonly DescriptorEntry[]): DescriptorMatch | undefined;
}

/**
 * The immutable result of compiling a config: what the request path consults. `Config` is the
 * validated config it was compiled from (src/config/schema.ts), `Cors` a route's CORS policy.
 */
export interface RuleTable<Config = unknown, Cors = unknown> {
  readonly config: Config;
  readonly limiters: ReadonlyMap<string, CompiledLimiter>;
  readonly routes: readonly CompiledRoute<Cors>[];
  readonly router: RouteMatcher<CompiledRoute<Cors>>;
  /** Envoy's descriptors, mapped to the limiters that answer them. */
  readonly descriptors: DescriptorMatcher;
}
