import bytes from 'bytes';
import ms from 'ms';
import { z } from 'zod';
import { publicUrl } from './public-url.js';

/** A duration: a number of milliseconds, or a string such as "50ms", "10s", "1m", "1h". */
export const duration = z
  .union([z.number().int().nonnegative(), z.string()])
  .transform((value, ctx) => {
    if (typeof value === 'number') return value;
    const parsed = /^\d+$/.test(value.trim()) ? Number(value) : ms(value as ms.StringValue);
    if (typeof parsed !== 'number' || !Number.isFinite(parsed) || parsed < 0) {
      ctx.addIssue({ code: 'custom', message: `not a duration: "${value}" (use e.g. 50ms, 10s, 1m, 1h)` });
      return z.NEVER;
    }
    return Math.round(parsed);
  })
  .meta({ description: 'Milliseconds, or a string such as "50ms", "10s", "1m", "1h".' });

/** A size in bytes: a number, or a string such as "512kb" or "5mb". */
export const byteSize = z
  .union([z.number().int().nonnegative(), z.string()])
  .transform((value, ctx) => {
    const parsed = typeof value === 'number' ? value : bytes.parse(value);
    if (parsed === null || !Number.isFinite(parsed) || parsed < 0) {
      ctx.addIssue({ code: 'custom', message: `not a size: "${String(value)}" (use e.g. 512kb, 5mb)` });
      return z.NEVER;
    }
    return Math.floor(parsed);
  })
  .meta({ description: 'Bytes, or a string such as "512kb" or "5mb".' });

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
/** A count bound where 0 means "no bound". */
const bound = z.coerce.number().int().min(0);

/** A comma-separated string (as environment variables give) or a YAML list. */
const stringList = z
  .union([z.array(z.string()), z.string()])
  .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter((s) => s.length > 0));

const name = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, 'letters, digits, "_", ".", ":" or "-"');

export const keyPart = z
  .union([
    z.enum(['ip', 'user_agent', 'jwt', 'workspace_token']),
    z.string().regex(/^header:[A-Za-z0-9-]+$/, 'header:<Header-Name>'),
  ])
  .meta({
    description:
      'ip (client IP, IPv6 by prefix), user_agent (hashed), jwt (verified visitor-session claim), ' +
      'workspace_token (verified token id), or header:<Name> (hashed header value).',
  });

const listener = z.strictObject({
  name: name.default('public'),
  host: z.string().default('0.0.0.0'),
  port: port.default(8080),
  /** Scheme reported in X-Forwarded-Proto when no trusted proxy states one. */
  protocol: z.enum(['http', 'https']).default('http'),
  /** Also send the IETF RateLimit-Policy and RateLimit headers (draft-ietf-httpapi-ratelimit-headers). */
  ietfHeaders: z.boolean().default(false),
});

const failurePolicy = z.enum(['open', 'closed']);

const redisStore = z.strictObject({
  url: z.string().default(''),
  /** Redis Cluster seed nodes ("host:port"); when non-empty, the Cluster client is used instead of url. */
  cluster: stringList.default([]),
  keyPrefix: z.string().default('tg:'),
  commandTimeout: duration.refine((d) => d >= 1, 'must be at least 1ms').default(50),
  connectTimeout: duration.refine((d) => d >= 1, 'must be at least 1ms').default(1000),
});

const store = z.strictObject({
  redis: redisStore.prefault({}),
  memory: z
    .strictObject({
      maxKeys: positiveInt.default(100_000),
      sweepInterval: duration.refine((d) => d >= 100, 'must be at least 100ms').default(10_000),
    })
    .prefault({}),
  /** Default store failure policy of limiters that do not set their own. */
  onError: failurePolicy.default('open'),
  /** Spent windows remembered in process until they reset, so a flood is refused without a round trip. */
  overLimitCache: z.strictObject({ maxKeys: positiveInt.default(10_000) }).prefault({}),
});

const jwt = z.strictObject({
  secret: z.string().default('').meta({ description: 'HS256 shared secret. Empty: use secretFile.' }),
  secretFile: z
    .string()
    .default('')
    .meta({ description: 'File holding the HS256 secret; created with a random secret if missing.' }),
  publicKeys: z.array(z.string()).default([]).meta({ description: 'PEM files (SPKI) for RS/ES/EdDSA.' }),
  jwksFile: z.string().default('').meta({ description: 'A local JWKS JSON file.' }),
  algorithms: z.array(z.string().refine((a) => a.toLowerCase() !== 'none', '"none" is never allowed')).min(1),
  issuer: z.string().optional(),
  audience: z.string().optional(),
  sessionClaim: z.string().default('sid'),
  clockTolerance: duration.default(0),
  ttl: duration
    .refine((d) => d >= 1000, 'must be at least 1s')
    .default(86_400_000)
    .meta({ description: 'Lifetime of the visitor tokens the embedded widget service issues.' }),
});

const workspaceTokens = z.strictObject({
  /** database: the tokens `tollgate tokens create` issues (in services.dataDir); static: the list below. */
  source: z.enum(['database', 'static']).default('static'),
  /** How long a verified token is trusted without asking the database again (bounds how late a revocation bites). */
  cacheTtl: duration.default(5_000),
  /** Static tokens: id and the SHA-256 (hex) of the secret. */
  static: z
    .array(z.strictObject({ id: z.string().min(1), sha256: z.string().regex(/^[0-9a-f]{64}$/i) }))
    .default([]),
});

const identity = z.strictObject({
  trustedProxies: stringList.default([]),
  ipv6PrefixLength: z.coerce.number().int().min(1).max(128).default(64),
  jwt: jwt.optional(),
  workspaceTokens: workspaceTokens.prefault({}),
});

export const embeddedServices = ['websites', 'reports', 'widget', 'bulksync'] as const;
export type EmbeddedServiceName = (typeof embeddedServices)[number];

const upstream = z.strictObject({
  /** Where to forward. Empty: run the `embedded` service in process and forward to it. */
  url: z.union([z.literal(''), z.url({ protocol: /^https?$/ })]).default(''),
  embedded: z.enum(embeddedServices).optional(),
  connections: positiveInt.default(128),
  connectTimeout: duration.default(5_000),
  headersTimeout: duration.default(30_000),
  bodyTimeout: duration.default(30_000),
  keepAliveTimeout: duration.default(4_000),
  preserveHost: z.boolean().default(true),
  streamConnections: positiveInt.default(1024).meta({
    description:
      'Connections kept apart for event streams (routes with stream: true), in a pool of their own so ' +
      'open streams never take the connections of ordinary requests. A stream past it gets 503.',
  }),
});

const window = z.strictObject({
  limit: positiveInt,
  period: duration.refine((p) => p >= 1000, 'period must be at least 1s'),
  key: z.array(keyPart).min(1),
});

const limiterBody = {
  message: z.string().default('Too Many Attempts.'),
  shadow: z.boolean().default(false),
  /** Refuse requests for a spent window from the in-process over-limit cache. */
  overLimitCache: z.boolean().default(true),
  onStoreError: failurePolicy.optional(),
  windows: z.array(window).min(1),
};

export const limiter = z.strictObject(limiterBody);
const inlineLimiter = z.strictObject({ name: name.optional(), ...limiterBody });

const pathPattern = z
  .string()
  .regex(/^\/[^*]*\*?$/, 'a path starting with "/", optionally ending in "*" (prefix match)');

/** An HTTP token (RFC 9110 §5.6.2): what a method or header name may be. */
const httpToken = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A browser origin as the Origin header carries it, "scheme://host[:port]" (lower case, no default port); undefined if it is none. */
function parseOrigin(value: string): string | undefined {
  if (!/^https?:\/\//i.test(value)) return undefined;
  try {
    const url = new URL(value);
    const bare = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
    return bare && !value.includes('?') && !value.includes('#') ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** "*", or a list (a YAML list, or a comma-separated string as environment variables give) of origins. */
const corsOrigins = z.union([z.array(z.string()), z.string()]).transform((value, ctx) => {
  const list = (Array.isArray(value) ? value : value.split(',')).map((s) => s.trim()).filter((s) => s !== '');
  if (list.length === 0) {
    ctx.addIssue({ code: 'custom', message: 'name at least one origin, or "*"' });
    return z.NEVER;
  }
  if (list.includes('*')) {
    if (list.length === 1) return '*' as const;
    ctx.addIssue({ code: 'custom', message: '"*" already allows every origin: list no others with it' });
    return z.NEVER;
  }
  const origins: string[] = [];
  list.forEach((entry, i) => {
    const origin = parseOrigin(entry);
    if (origin !== undefined) origins.push(origin);
    else {
      ctx.addIssue({
        code: 'custom',
        path: [i],
        message: `not an origin: "${entry}" (write scheme://host[:port], e.g. https://shop.example)`,
      });
    }
  });
  return origins;
});

const corsPolicy = z
  .strictObject({
    origins: corsOrigins.meta({
      description:
        'Origins whose pages may call these routes: "*" (any), or a list (or comma-separated string) ' +
        'of "scheme://host[:port]".',
    }),
    methods: stringList
      .pipe(z.array(z.string().regex(httpToken, 'a method name').toUpperCase()).min(1))
      .default(['GET', 'HEAD', 'POST'])
      .meta({ description: 'Methods a cross-origin page may use (Access-Control-Allow-Methods).' }),
    headers: stringList
      .pipe(z.array(z.string().regex(httpToken, 'a header name').toLowerCase()))
      .default([])
      .meta({ description: 'Request headers a cross-origin page may send (Access-Control-Allow-Headers).' }),
    maxAge: duration
      .refine((d) => d <= 86_400_000, 'at most 24h (browsers cap it lower: Chromium at 2h)')
      .default(600_000)
      .meta({ description: 'How long a browser may cache a preflight answer (Access-Control-Max-Age).' }),
    credentials: z.boolean().default(false).meta({
      description: 'Let pages send cookies and read responses with them (needs a list of origins).',
    }),
  })
  .refine((p) => !(p.credentials && p.origins === '*'), {
    path: ['credentials'],
    message: 'credentials need a list of origins: with "*" any site could act as its visitors',
  });

const route = z.strictObject({
  name,
  hosts: z.array(z.string().min(1)).default(['*']),
  methods: z.array(z.string().toUpperCase()).default(['*']),
  paths: z.array(pathPattern).min(1),
  upstream: name,
  limiters: z.array(z.union([name, inlineLimiter])).default([]),
  maxBodySize: byteSize.optional().meta({
    description:
      'Largest request body, read whole at the gateway before forwarding (413 past it). Unset: ' +
      'requests.maxBodySize. 0: the body is streamed to the upstream unread and unbounded. A route to ' +
      'an embedded service is never bound looser than services.maxBodySize.',
  }),
  stream: z
    .boolean()
    .default(false)
    .meta({
      description:
        "The route serves event streams (Server-Sent Events): forwarded on the upstream's stream pool " +
        '(streamConnections) and counted against the streams caps, not the requests in flight per IP.',
    }),
  cors: z
    .union([name, corsPolicy])
    .optional()
    .meta({ description: 'Cross-origin access from browsers: a policy named under `cors`, or one inline.' }),
});

const requests = z.strictObject({
  maxBodySize: byteSize.optional().meta({
    description:
      'Body bound of every route that sets none (413 past it). Unset: services.maxBodySize. ' +
      '0: bodies are streamed unread and unbounded (an explicit opt-out).',
  }),
  bodyTimeout: duration
    .refine((d) => d >= 1, 'must be at least 1ms')
    .default(10_000)
    .meta({ description: 'How long the gateway waits for a whole request body; 408 after it.' }),
  maxInFlightPerIp: bound.default(64).meta({
    description:
      'Requests one client IP (IPv6: its prefix) may have in flight in this process, event streams ' +
      'apart; one more gets 429. 0: no bound.',
  }),
});

const streams = z.strictObject({
  maxPerSession: bound.default(3).meta({
    description:
      'Event streams one visitor session (verified JWT) may hold open in this process; a newer one ' +
      'gets 429. 0: no bound.',
  }),
  maxPerIp: bound.default(128).meta({
    description:
      'Event streams one client IP (IPv6: its prefix) may hold open in this process; a newer one ' +
      'gets 429. 0: no bound.',
  }),
});

const admin = z.strictObject({
  host: z.string().default('127.0.0.1'),
  port: port.default(9091),
});

const publicUrlDescription = (api: string, example: string) =>
  `The ${api} API's public base URL (an http or https origin, e.g. ${example}): its list links ` +
  "(`links`, `meta.path`) start with it. Empty: they are the path and query alone. The request's " +
  'Host header is never used.';

const services = z.strictObject({
  /** Where the embedded services keep their SQLite database (tollgate.db) and the generated JWT secret. */
  dataDir: z.string().min(1).default('./data'),
  /** API keys that each get a user of the websites and reports APIs at start (for containers and tests). */
  bootstrapApiKeys: stringList.default([]),
  /** Largest request body the embedded services accept (413 beyond). */
  maxBodySize: byteSize.refine((n) => n >= 1, 'must be at least 1 byte').default(5 * 1024 * 1024),
  websites: z
    .strictObject({
      publicUrl: publicUrl.meta({ description: publicUrlDescription('websites', 'http://localhost:8080') }),
    })
    .prefault({}),
  reports: z
    .strictObject({
      publicUrl: publicUrl.meta({
        description: publicUrlDescription('reports', 'http://analyzer.localhost:8080'),
      }),
      /** Let the analyser fetch loopback, private and link-local addresses (tests, local use). */
      allowPrivateNetworks: z.boolean().default(false),
      fetchTimeout: duration.default(10_000),
      maxRedirects: z.coerce.number().int().min(0).max(20).default(5),
      maxPageSize: byteSize.default(5 * 1024 * 1024),
      /** The longest the HTML analysis of one page may take (in a worker thread). */
      analysisTimeout: duration.refine((d) => d >= 100, 'must be at least 100ms').default(20_000),
      /** Analyses waiting for a worker thread; one more is refused with 503. */
      analysisQueue: z.coerce.number().int().min(0).max(10_000).default(64),
    })
    .prefault({}),
  bulksync: z
    .strictObject({
      /** A "<id>|<secret>" workspace token ensured at start. */
      bootstrapToken: z.string().default(''),
      /** The workspace the bootstrap token belongs to. */
      bootstrapWorkspace: name.default('default'),
    })
    .prefault({}),
});

const workers = z
  .union([z.literal('auto'), z.coerce.number().int().min(1).max(256)])
  .meta({ description: 'Worker processes sharing the listeners (node:cluster); "auto" = one per CPU.' });

export const configSchema = z.strictObject({
  listeners: z.array(listener).min(1),
  /** The admin listener (GET /metrics), off the public port. Absent: no admin listener. */
  admin: admin.optional(),
  workers: workers.default(1),
  /** Global shadow switch: every limiter counts and reports but never refuses. */
  shadow: z.boolean().default(false),
  reload: z.strictObject({ watch: z.boolean().default(true) }).prefault({}),
  log: z
    .strictObject({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    })
    .prefault({}),
  shutdown: z.strictObject({ drainTimeout: duration.default(10_000) }).prefault({}),
  store: store.prefault({}),
  identity: identity.prefault({}),
  services: services.prefault({}),
  requests: requests.prefault({}),
  streams: streams.prefault({}),
  upstreams: z.record(name, upstream),
  limiters: z.record(name, limiter).default({}),
  cors: z
    .record(name, corsPolicy)
    .default({})
    .meta({ description: 'Named CORS policies, which routes refer to with `cors: <name>`.' }),
  routes: z.array(route).min(1),
});

export type GatewayConfig = z.output<typeof configSchema>;
export type LimiterConfig = z.output<typeof limiter>;
export type RouteConfig = z.output<typeof route>;
export type UpstreamConfig = z.output<typeof upstream>;
export type ServicesConfig = z.output<typeof services>;
export type KeyPart = z.output<typeof keyPart>;
export type JwtConfig = z.output<typeof jwt>;
export type FailurePolicy = z.output<typeof failurePolicy>;
export type ListenerConfig = z.output<typeof listener>;
export type CorsPolicyConfig = z.output<typeof corsPolicy>;
