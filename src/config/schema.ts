import bytes from 'bytes';
import ms from 'ms';
import { z } from 'zod';
import { suggestion } from './did-you-mean.js';
import { publicUrl } from './public-url.js';
import { SERVICE_NAMES } from '../service-names.js';

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
  .meta({ title: 'duration', description: 'Milliseconds, or a string such as "50ms", "10s", "1m", "1h".' });

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
  .meta({ title: 'size', description: 'Bytes, or a string such as "512kb" or "5mb".' });

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
/** A count bound where 0 means "no bound". */
const bound = z.coerce.number().int().min(0);

/** A comma-separated string (as environment variables give) or a YAML list. */
const stringList = z
  .union([z.array(z.string()), z.string()])
  .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter((s) => s.length > 0))
  .meta({ title: 'list of strings, or a comma-separated string' });

const name = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, 'letters, digits, "_", ".", ":" or "-"')
  .meta({ title: 'name' });

const KEY_PARTS = ['ip', 'user_agent', 'jwt', 'workspace_token'] as const;
const HEADER_PART = /^header:[A-Za-z0-9-]+$/;

/** Why a key part is refused, naming the value and the allowed set (undefined: it is valid). */
function keyPartProblem(v: string): string | undefined {
  if ((KEY_PARTS as readonly string[]).includes(v) || HEADER_PART.test(v)) return undefined;
  if (/^header:/i.test(v))
    return `not a header key part: "${v}" (use header:<Header-Name>, letters, digits and "-", e.g. header:X-Api-Key)`;
  const allowed = `${KEY_PARTS.join(', ')} or header:<Header-Name>`;
  return `unknown key part "${v}"; expected one of ${allowed}${suggestion(v, KEY_PARTS)}`;
}

export const keyPart = z
  .string()
  .superRefine((v, ctx) => {
    const problem = keyPartProblem(v);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .meta({
    anyOf: [{ enum: [...KEY_PARTS] }, { pattern: HEADER_PART.source }],
    title: 'key part',
    description:
      'ip (client IP, IPv6 by prefix), user_agent (hashed), jwt (verified visitor-session claim), ' +
      'workspace_token (verified token id), or header:<Name> (hashed header value).',
  });

const listenerTls = z.strictObject({
  cert: z.string().min(1).meta({
    description: 'The certificate chain (PEM file). Reloaded when it changes and on SIGHUP.',
  }),
  key: z.string().min(1).meta({ description: 'The private key of the certificate (PEM file).' }),
  ca: z
    .string()
    .default('')
    .meta({
      description:
        'CA certificates (PEM file) that client certificates must chain to (mutual TLS: a client ' +
        'without a valid certificate is refused in the handshake). Empty: no client certificate is asked for.',
    }),
  minVersion: z
    .enum(['TLSv1.2', 'TLSv1.3'])
    .default('TLSv1.2')
    .meta({ description: 'The oldest TLS version accepted.' }),
});

const listenerHttp2 = z.strictObject({
  enabled: z.boolean().default(true).meta({
    description: 'Offer HTTP/2 by ALPN next to HTTP/1.1 (TLS listeners only: there is no cleartext h2).',
  }),
  maxConcurrentStreams: positiveInt.default(100).meta({
    description: 'Streams one HTTP/2 connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS).',
  }),
  maxResetBurst: positiveInt.default(200).meta({
    description:
      'Streams a client may cancel (RST_STREAM) in a burst before it is disconnected with GOAWAY ' +
      '(the rapid-reset attack, CVE-2023-44487).',
  }),
  maxResetsPerSecond: positiveInt.default(50).meta({
    description: 'The sustained rate of cancelled streams per connection the burst refills at.',
  }),
});

const listener = z
  .strictObject({
    name: name.default('public').meta({ description: 'A name for the logs.' }),
    host: z.string().default('0.0.0.0').meta({ description: 'The address to bind ("::" for IPv6).' }),
    port: port.default(8080).meta({ description: 'The port; 0 takes any free port.' }),
    protocol: z.enum(['http', 'https']).default('http').meta({
      description:
        'The scheme put in X-Forwarded-Proto when no trusted proxy states one (always https on a TLS listener).',
    }),
    tls: listenerTls.optional().meta({
      description:
        'Terminate TLS on this listener (HTTP/2 and HTTP/1.1, chosen by ALPN). Absent: plain HTTP/1.1.',
    }),
    http2: listenerHttp2.prefault({}).meta({ description: 'HTTP/2 on a TLS listener.' }),
    ietfHeaders: z.boolean().default(false).meta({
      description:
        'Also send the IETF RateLimit-Policy and RateLimit headers (draft-ietf-httpapi-ratelimit-headers).',
    }),
    mode: z
      .enum(['proxy', 'decision'])
      .default('proxy')
      .meta({
        description:
          "proxy: count and forward requests. decision: forward nothing; answer a proxy's forward-auth or " +
          'auth_request subrequest (the original request in X-Forwarded-Method/-Uri/-Host or X-Original-Method/-URI) ' +
          'with 200 and the X-RateLimit-* headers, or the refusal (docs/forward-auth.md).',
      }),
    onLimited: z
      .union([z.literal(429), z.literal(403)])
      .default(429)
      .meta({
        description:
          'The status of a rate-limited decision (decision listeners only). 403 for nginx auth_request, ' +
          'which turns any other refusal status into 500; the 429 body then comes in X-Tollgate-Error.',
      }),
  })
  .refine((l) => l.mode === 'decision' || l.onLimited === 429, {
    message: 'onLimited applies to decision listeners (mode: decision) only',
    path: ['onLimited'],
  });

const failurePolicy = z.enum(['open', 'closed', 'local']);

const redisTls = z.strictObject({
  caFile: z.string().default('').meta({
    description: "A PEM file of the CA(s) that signed Redis's certificate. Empty: the system's CAs.",
  }),
  serverName: z.string().default('').meta({
    description:
      'The name (SNI) sent and checked against the certificate. Empty: the host of the url (or of each cluster node).',
  }),
  certFile: z.string().default('').meta({
    description: 'A PEM client certificate, for a Redis that requires one (tls-auth-clients); with keyFile.',
  }),
  keyFile: z.string().default('').meta({ description: "The client certificate's PEM private key." }),
});

const redisStore = z.strictObject({
  url: z
    .string()
    .default('')
    .meta({
      description:
        'Non-empty: count in Redis (redis://[[user]:password@]host:port[/db], rediss:// for TLS, ' +
        'user being an ACL user). Empty (and no cluster): count in this process.',
    }),
  cluster: stringList.prefault([]).meta({
    description:
      'Redis Cluster seed nodes ("host:port", or rediss://[[user]:password@]host:port for TLS and ' +
      'an ACL user, the same for every seed); the rest of the cluster is discovered from them. ' +
      'Non-empty: the Cluster client is used and url is ignored.',
  }),
  tls: redisTls.prefault({}).meta({
    description: 'TLS settings of a rediss:// url or cluster (the system CAs are trusted by default).',
  }),
  keyPrefix: z.string().default('tg:').meta({ description: 'The prefix of every store key.' }),
  commandTimeout: duration
    .refine((d) => d >= 1, 'must be at least 1ms')
    .prefault('50ms')
    .meta({
      description: "The longest a request waits for Redis; then the limiter's onStoreError policy applies.",
    }),
  batchWindow: duration
    .refine((d) => d <= 10, 'must be at most 10ms (it delays every request that reaches Redis)')
    .prefault('0ms')
    .meta({
      description:
        'How long a batch of store requests waits for more before it is sent (as envoyproxy/ratelimit ' +
        'REDIS_PIPELINE_WINDOW). 0: sent at the end of the event-loop turn that opened it. Longer: fewer, ' +
        'larger script calls (less Redis CPU per request), each request delayed up to this long.',
    }),
  connectTimeout: duration
    .refine((d) => d >= 1, 'must be at least 1ms')
    .prefault('1s')
    .meta({
      description:
        'The connection timeout. At start the gateway waits up to this long for Redis, then starts anyway.',
    }),
});

const store = z.strictObject({
  redis: redisStore.prefault({}).meta({ description: 'The Redis store, shared by every gateway instance.' }),
  memory: z
    .strictObject({
      maxKeys: positiveInt.default(100_000).meta({
        description:
          'Windows kept in process. Past it, the window that resets soonest is evicted (its count is forgotten).',
      }),
      sweepInterval: duration
        .refine((d) => d >= 100, 'must be at least 100ms')
        .prefault('10s')
        .meta({ description: 'How often expired windows are dropped.' }),
    })
    .prefault({})
    .meta({ description: 'The in-process store, used when neither redis.url nor redis.cluster is set.' }),
  onError: failurePolicy.default('open').meta({
    description:
      'The onStoreError of limiters that set none: open forwards the request without rate-limit headers, ' +
      'closed answers 503, local counts in each instance at the limit divided by the live instances. ' +
      'Unlike the rest of store, a reload applies it at once.',
  }),
  overLimitCache: z
    .strictObject({
      maxKeys: positiveInt.default(10_000).meta({ description: 'Spent windows remembered (a bounded LRU).' }),
    })
    .prefault({})
    .meta({
      description:
        'Spent windows remembered in process until they reset, so a flood is refused without a round trip ' +
        '(Redis stores only).',
    }),
});

const jwt = z.strictObject({
  secret: z
    .string()
    .default('')
    .meta({ description: 'The HMAC (HS256) shared secret. Empty: secretFile is used.' }),
  secretFile: z.string().default('').meta({
    description:
      'A file holding the HMAC secret, used when secret is empty; created with a random secret if missing.',
  }),
  publicKeys: z
    .array(z.string())
    .default([])
    .meta({ description: 'PEM (SPKI) files, for RS*, PS*, ES* or EdDSA tokens.' }),
  jwksFile: z.string().default('').meta({
    description:
      'A local JWKS JSON file (keys chosen by kid and alg). Key material is resolved in the order jwksFile, publicKeys, secret, secretFile.',
  }),
  algorithms: z
    .array(z.string().refine((a) => a.toLowerCase() !== 'none', '"none" is never allowed'))
    .min(1)
    .meta({
      description:
        'The accepted alg values ("none" is refused). The embedded widget signs with the first, ' +
        'which must then be HS256, HS384 or HS512.',
    }),
  issuer: z
    .string()
    .optional()
    .meta({ description: 'When set, the iss claim must equal it (and issued tokens carry it).' }),
  audience: z
    .string()
    .optional()
    .meta({ description: 'When set, the aud claim must equal it (and issued tokens carry it).' }),
  sessionClaim: z
    .string()
    .default('sid')
    .meta({ description: 'The claim that identifies the visitor session: the jwt key part.' }),
  clockTolerance: duration.prefault(0).meta({ description: 'Leeway for exp and nbf.' }),
  ttl: duration
    .refine((d) => d >= 1000, 'must be at least 1s')
    .prefault('24h')
    .meta({ description: 'Lifetime of the visitor tokens the embedded widget service issues.' }),
});

const workspaceTokens = z.strictObject({
  source: z.enum(['database', 'static']).default('static').meta({
    description:
      'database: the tokens `tollgate tokens create` issues, in services.dataDir; static: the list in static.',
  }),
  cacheTtl: duration.prefault('5s').meta({
    description:
      'How long a verified database token is trusted without asking again, so a revocation bites at most ' +
      'this late. Failures are never cached.',
  }),
  static: z
    .array(
      z.strictObject({
        id: z.string().min(1).meta({ description: 'The token id (the part before "|").' }),
        sha256: z
          .string()
          .regex(/^[0-9a-f]{64}$/i)
          .meta({
            description: "The SHA-256 (hex) of the secret part, e.g. printf %s 's3cret' | sha256sum.",
          }),
        plan: z.string().min(1).optional().meta({
          description: "The token's plan: its tier when tiers.workspaceTokenPlan is on.",
        }),
        workspace: z.string().min(1).optional().meta({
          description:
            'The workspace the token belongs to, for overrides keyed workspace:<name> and lists naming workspaces.',
        }),
      }),
    )
    .default([])
    .meta({ description: 'The tokens the gateway accepts when source is static.' }),
});

const identity = z.strictObject({
  trustedProxies: stringList.prefault([]).meta({
    description:
      'CIDRs or addresses whose X-Forwarded-For is honoured: it is walked from the right, skipping ' +
      'trusted hops, and the first untrusted address is the client.',
  }),
  ipv6PrefixLength: z.coerce
    .number()
    .int()
    .min(1)
    .max(128)
    .default(64)
    .meta({ description: 'IPv6 clients are keyed by this prefix (IPv4-mapped IPv6 counts as IPv4).' }),
  jwt: jwt.optional().meta({
    description:
      'Visitor-session JWTs (the jwt key part), verified with jose. Required when a route has a limiter ' +
      'keyed on jwt, and whenever the widget is embedded (it signs with this entry, so it needs secret or secretFile).',
  }),
  workspaceTokens: workspaceTokens
    .prefault({})
    .meta({ description: 'Workspace API tokens "<id>|<secret>" (the workspace_token key part).' }),
});

const tierJwt = z.strictObject({
  claim: z.string().min(1).default('plan').meta({ description: 'The claim that names the tier.' }),
  jwksUrl: z.string().default('').meta({
    description: 'A JWKS URL (fetched and cached by jose) to verify a bearer JWT with.',
  }),
  jwksFile: z
    .string()
    .default('')
    .meta({ description: 'A local JWKS JSON file to verify a bearer JWT with.' }),
  publicKeys: z
    .array(z.string())
    .default([])
    .meta({ description: 'PEM (SPKI) files to verify a bearer JWT with.' }),
  secret: z.string().default('').meta({ description: 'An HMAC secret to verify a bearer JWT with.' }),
  algorithms: z
    .array(z.string().refine((a) => a.toLowerCase() !== 'none', '"none" is never allowed'))
    .optional()
    .meta({ description: 'The accepted alg values; unset: those of identity.jwt, or RS256 and ES256.' }),
  issuer: z.string().optional().meta({ description: 'When set, the iss claim must equal it.' }),
  audience: z.string().optional().meta({ description: 'When set, the aud claim must equal it.' }),
});

const tiers = z.strictObject({
  jwt: tierJwt.optional().meta({
    description:
      'The tier is a claim of a verified JWT. With none of jwksUrl, jwksFile, publicKeys or secret set, the ' +
      'visitor JWT (identity.jwt) is read; otherwise the Authorization bearer JWT, verified with them.',
  }),
  workspaceTokenPlan: z.boolean().default(false).meta({
    description:
      "The tier is the verified workspace token's plan (static: its plan; database: its workspace's).",
  }),
  overrides: z
    .strictObject({
      file: z
        .string()
        .default('')
        .meta({
          description:
            'A YAML or JSON file of overrides ("<kind>:<value>": tier, unlimited or { limit, burst }), reloaded ' +
            'when it changes; a bad file keeps the last good overrides. Empty: none from a file.',
        }),
      pollInterval: duration
        .refine((d) => d >= 100, 'must be at least 100ms')
        .prefault('1s')
        .meta({
          description:
            'How often the store is asked whether the admin API changed the overrides (one GET of a version key).',
        }),
    })
    .prefault({})
    .meta({
      description: 'Overrides of the tier or limit per API token, workspace, JWT subject or address.',
    }),
});

const upstream = z.strictObject({
  url: z
    .union([z.literal(''), z.url({ protocol: /^https?$/ })])
    .default('')
    .meta({
      description:
        'Where to forward: http(s)://host:port[/base]; a base path is prefixed to forwarded paths. ' +
        'Empty: forward to the embedded service.',
    }),
  embedded: z.enum(SERVICE_NAMES).optional().meta({
    description:
      'The service to run in the gateway process (on a loopback port) when url is empty. One of url and embedded is required.',
  }),
  connections: positiveInt.default(128).meta({ description: 'The most connections the undici Pool opens.' }),
  connectRate: z
    .number()
    .int()
    .min(0)
    .default(100)
    .meta({
      description:
        'New connections per second the pool may open once its first `connections` are open ' +
        '(closed ones replaced, cancelled requests), so a flood of cancels never becomes a flood ' +
        'of connects. 0: not paced.',
    }),
  connectTimeout: duration.prefault('5s').meta({ description: 'Connecting for longer gives 504.' }),
  headersTimeout: duration
    .prefault('30s')
    .meta({ description: 'Waiting longer for the response headers gives 504.' }),
  bodyTimeout: duration.prefault('30s').meta({
    description: 'The idle time allowed between response body chunks; the response is cut off after it.',
  }),
  keepAliveTimeout: duration
    .prefault('4s')
    .meta({ description: 'Idle keep-alive sockets are closed after it.' }),
  preserveHost: z
    .boolean()
    .default(true)
    .meta({ description: "Forward the client's Host header (false: the upstream's host)." }),
  allowH2: z.boolean().default(false).meta({
    description:
      'Let an https upstream answer in HTTP/2 (negotiated by ALPN); otherwise upstreams are spoken to in HTTP/1.1.',
  }),
  streamConnections: positiveInt.default(1024).meta({
    description:
      'Connections kept apart for event streams (routes with stream: true), in a pool of their own so ' +
      'open streams never take the connections of ordinary requests. A stream past it gets 503.',
  }),
});

/** A month as a duration (a year ÷ 12); with align: calendar, a calendar month of its real length. */
export const MONTH_MS = 2_629_800_000;
export const CALENDAR_PERIODS: ReadonlyMap<number, 'day' | 'week' | 'month'> = new Map([
  [86_400_000, 'day'],
  [604_800_000, 'week'],
  [MONTH_MS, 'month'],
]);
const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
const knownZone = (timeZone: string): boolean => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
};
const windowPeriod = z.union([z.literal('1mo').transform(() => MONTH_MS), duration]);

/** [lease] `lease: true`, and each field left unset (src/rules/model.ts's LeaseRule). */
export const DEFAULT_LEASE = { max: 1000, spread: 4 } as const;

/** [lease] Leased slices of a fixed window's budget (docs/limiting.md#leases). */
const leaseOption = z
  .union([
    z.boolean(),
    z.strictObject({
      max: positiveInt.default(DEFAULT_LEASE.max).meta({
        description: `The largest slice an instance leases at once (unset: ${DEFAULT_LEASE.max}).`,
      }),
      spread: positiveInt.default(DEFAULT_LEASE.spread).meta({
        description: `An instance leases at most 1 ÷ (spread × live instances) of what remains (unset: ${DEFAULT_LEASE.spread}).`,
      }),
    }),
  ])
  .optional()
  .meta({
    description:
      'Lease slices of the remaining budget and spend them in this instance, without a round trip per ' +
      `request (fixed windows; true: { max: ${DEFAULT_LEASE.max}, spread: ${DEFAULT_LEASE.spread} }; false: off). ` +
      'The total admitted never exceeds the limit; unspent slices under-admit at most instances × max. ' +
      'See docs/limiting.md#leases.',
  });

const window = z
  .strictObject({
    limit: positiveInt.meta({
      description: 'Requests allowed per period (token-bucket: tokens that come back per period).',
    }),
    period: windowPeriod
      .refine((p) => p >= 1000, 'period must be at least 1s')
      .meta({
        description:
          "The window's length (at least 1s; 1mo is a year ÷ 12). A fixed window starts at its key's first hit " +
          '(or, with align: calendar, at a calendar boundary); sliding windows are aligned on the clock.',
      }),
    algorithm: z
      .enum(['fixed', 'sliding', 'token-bucket'])
      .default('fixed')
      .meta({
        description:
          'fixed: limit per period from the first hit; sliding: a sliding-window counter (the previous ' +
          "window's count weighted by overlap); token-bucket: GCRA, limit per period with a burst. See docs/limiting.md.",
      }),
    burst: positiveInt.optional().meta({
      description: 'token-bucket only: requests that may pass at once (what the bucket holds); unset: limit.',
    }),
    align: z
      .enum(['first-hit', 'calendar'])
      .optional()
      .meta({
        description:
          'calendar (algorithm fixed, period 1d, 1w or 1mo): the window resets at the calendar boundary ' +
          '(midnight, the week start, the 1st of the month) in timeZone. Unset: first-hit.',
      }),
    timeZone: z.string().optional().meta({
      description:
        'align: calendar only: the IANA time zone of the calendar (e.g. Europe/Berlin). Unset: UTC.',
    }),
    weekStart: z.enum(WEEKDAYS).optional().meta({
      description: 'align: calendar, period 1w only: the first day of the week. Unset: monday (ISO).',
    }),
    tiers: z
      .record(
        name,
        z.strictObject({
          limit: positiveInt.meta({ description: "The tier's limit (token-bucket: its refill per period)." }),
          burst: positiveInt
            .optional()
            .meta({ description: "token-bucket only: the tier's burst; unset: limit." }),
        }),
      )
      .optional()
      .meta({
        description:
          'Limit (and burst) per named tier, e.g. { free: { limit: 10 }, pro: { limit: 100 } }. A request of ' +
          "another tier, or of none, gets the window's own limit (see docs/limiting.md#tiers-and-overrides).",
      }),
    key: z
      .array(keyPart)
      .superRefine((parts, ctx) => {
        parts.forEach((p, i) => {
          if (parts.indexOf(p) < i)
            ctx.addIssue({
              code: 'custom',
              path: [i],
              message: `duplicate key part "${p}": each part may appear once`,
            });
        });
      })
      .default([])
      .meta({
        description:
          "The key parts that identify whose budget a request spends. Required on a route's limiters; " +
          "a limiter that only answers Envoy's descriptors keys by their values instead.",
      }),
    lease: leaseOption,
  })
  .superRefine((w, ctx) => {
    if (w.burst !== undefined && w.algorithm !== 'token-bucket')
      ctx.addIssue({
        code: 'custom',
        path: ['burst'],
        message: 'burst applies to algorithm: token-bucket only',
      });
    calendarChecks(w, ctx);
    if (w.lease && w.algorithm !== 'fixed')
      ctx.addIssue({
        code: 'custom',
        path: ['lease'],
        message: `lease applies to algorithm: fixed only (a ${w.algorithm} window is counted exactly)`,
      });
    // The store decides in integers below 2^53 (limit × period, burst × period in ms).
    const most = w.algorithm === 'token-bucket' ? (w.burst ?? w.limit) : w.limit;
    if (w.algorithm !== 'fixed' && most * w.period > Number.MAX_SAFE_INTEGER)
      ctx.addIssue({
        code: 'custom',
        path: [w.algorithm === 'token-bucket' && w.burst !== undefined ? 'burst' : 'limit'],
        message: `${w.algorithm}: limit (or burst) × period in ms must stay below 2^53`,
      });
    for (const [tier, t] of Object.entries(w.tiers ?? {})) {
      if (t.burst !== undefined && w.algorithm !== 'token-bucket')
        ctx.addIssue({
          code: 'custom',
          path: ['tiers', tier, 'burst'],
          message: 'burst applies to algorithm: token-bucket only',
        });
      if (w.algorithm !== 'fixed' && Math.max(t.limit, t.burst ?? 0) * w.period > Number.MAX_SAFE_INTEGER)
        ctx.addIssue({
          code: 'custom',
          path: ['tiers', tier, 'limit'],
          message: `${w.algorithm}: limit (or burst) × period in ms must stay below 2^53`,
        });
    }
  });

/** align: calendar and its companions (timeZone, weekStart). */
function calendarChecks(
  w: { period: number; algorithm: string; align?: string; timeZone?: string; weekStart?: string },
  ctx: z.RefinementCtx,
): void {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  if (w.align !== 'calendar') {
    if (w.timeZone !== undefined) issue('timeZone', 'timeZone applies to align: calendar only');
    if (w.weekStart !== undefined) issue('weekStart', 'weekStart applies to align: calendar only');
    return;
  }
  if (w.algorithm !== 'fixed')
    issue(
      'align',
      `align: calendar applies to algorithm: fixed only (a ${w.algorithm} window has no calendar boundary)`,
    );
  const unit = CALENDAR_PERIODS.get(w.period);
  if (unit === undefined) issue('period', 'align: calendar needs period 1d, 1w or 1mo');
  if (w.weekStart !== undefined && unit !== 'week') issue('weekStart', 'weekStart applies to period 1w only');
  if (w.timeZone !== undefined && !knownZone(w.timeZone))
    issue('timeZone', `unknown time zone "${w.timeZone}" (an IANA name, e.g. Europe/Berlin)`);
}

const descriptorEntry = z.strictObject({
  key: z.string().min(1).meta({ description: "The entry's key, e.g. remote_address or generic_key." }),
  value: z.string().min(1).optional().meta({
    description: 'Set: the entry must have this value. Unset: any value, each value counted apart.',
  }),
});

const descriptorPattern = z.strictObject({
  domain: z.string().min(1).meta({ description: "The domain of Envoy's rate-limit request." }),
  entries: z.array(descriptorEntry).min(1).meta({
    description: "The descriptor's entries, in order: a descriptor matches when it has exactly these keys.",
  }),
});

/** An HTTP token (RFC 9110 §5.6.2): what a method or header name may be. */
const httpToken = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A limiter's allow or deny list: who a request is, by client address or verified token id. */
const requestList = z.strictObject({
  addresses: z.array(z.string().min(1)).default([]).meta({
    description:
      'Client addresses or CIDRs (IPv4 or IPv6), matched against the client address (behind trusted proxies, X-Forwarded-For).',
  }),
  tokens: z
    .array(z.string().min(1))
    .default([])
    .meta({ description: 'Workspace-token (API-key) ids: a request whose verified token has one matches.' }),
  workspaces: z.array(z.string().min(1)).default([]).meta({
    description: 'Workspace names: a request whose verified workspace token belongs to one of them matches.',
  }),
});

const ban = z
  .strictObject({
    after: positiveInt.meta({ description: 'Refusals by this limiter that ban its key.' }),
    within: duration
      .refine((p) => p >= 1000, 'within must be at least 1s')
      .meta({ description: 'The refusals counted, from the first: a fixed window of this length.' }),
    for: duration
      .refine((p) => p >= 1000, 'for must be at least 1s')
      .meta({ description: 'How long a ban lasts: requests of the key get 429 banned until then.' }),
  })
  .meta({
    description:
      'A penalty box: a key refused `after` times within `within` is refused (429 banned) for `for`, ' +
      'in the store, without its windows being counted. See docs/limiting.md.',
  });

const limiterBody = {
  message: z.string().default('Too Many Attempts.').meta({ description: "The 429 body's message." }),
  limitedBody: z
    .enum(['error', 'problem'])
    .default('error')
    .meta({
      description:
        'The body of its 429: error, {"error":{"code":"rate_limited","message"}} (application/json); problem, ' +
        'application/problem+json (RFC 9457) of type quota-exceeded with the violated policies ' +
        '(draft-ietf-httpapi-ratelimit-headers).',
    }),
  shadow: z.boolean().default(false).meta({
    description: 'Count, log and report in the metrics, but never refuse and send no rate-limit headers.',
  }),
  overLimitCache: z
    .boolean()
    .default(true)
    .meta({ description: 'Refuse requests for a spent window from the in-process over-limit cache.' }),
  onStoreError: failurePolicy.optional().meta({
    description:
      'open, closed or local (count in this instance at the limit divided by the live instances) ' +
      'when the store fails; unset: store.onError.',
  }),
  windows: z.array(window).min(1).meta({
    description:
      'Checked and counted together, atomically. Two windows with the same period and key are refused: they would share a counter.',
  }),
  cost: z
    .union([
      positiveInt,
      z.strictObject({
        from: z
          .literal('content-length')
          .meta({ description: "The request attribute: its body's declared size." }),
        per: byteSize
          .prefault('1B')
          .meta({ description: 'Bytes per hit: the cost is ⌈size ÷ per⌉, at least 1.' }),
      }),
    ])
    .optional()
    .meta({
      description:
        'Hits a request spends in every window (unset: 1), or { from: content-length, per: 1KB }: its body size. ' +
        'A body of unknown size (chunked) is refused with 411. See docs/limiting.md#weighted-cost.',
    }),
  chargeAfter: z
    .strictObject({
      header: z.string().regex(httpToken, 'a header name').meta({
        description: 'The response header the upstream reports the cost in; it never reaches the client.',
      }),
      max: positiveInt.optional().meta({
        description: "A larger reported cost is charged as max (logged). Unset: the limiter's largest limit.",
      }),
    })
    .optional()
    .meta({
      description:
        'Charge the cost the upstream reports in a response header, after the response: the request is only checked ' +
        'for room before it is forwarded. See docs/limiting.md#charged-after-the-response.',
    }),
  countOnly: z
    .array(z.coerce.number().int().min(100).max(599))
    .min(1)
    .optional()
    .meta({
      description:
        'Count only responses with these statuses (e.g. [401]): the request is checked for room before it is ' +
        'forwarded and counted once its status is known.',
    }),
  descriptors: z
    .array(descriptorPattern)
    .default([])
    .meta({
      description:
        "The descriptors of Envoy's rate-limit requests this limiter answers (rateLimitService); " +
        'the first limiter (in config order) whose descriptor matches answers.',
    }),
  allow: requestList.optional().meta({
    description: 'Requests this limiter lets by without counting them (decision exempt).',
  }),
  deny: requestList.optional().meta({
    description: 'Requests this limiter refuses with 403 denied, never forwarded (deny wins over allow).',
  }),
  ban: ban.optional(),
  lease: leaseOption.meta({
    description:
      "Lease for every window of the limiter (a window's own lease wins; lease: false there turns it off). " +
      'See docs/limiting.md#leases.',
  }),
};

/** cost and chargeAfter name two ways of pricing a request: one at a time. */
const chargeChecks = (l: { cost?: unknown; chargeAfter?: unknown }, ctx: z.RefinementCtx) => {
  if (l.cost !== undefined && l.chargeAfter !== undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['cost'],
      message: 'cost and chargeAfter exclude each other: with chargeAfter the upstream reports the cost',
    });
};

/** [lease] What a lease cannot go with: a ban (checked in the store), deferred charging, other algorithms. */
const leaseChecks = (
  l: {
    lease?: unknown;
    ban?: unknown;
    chargeAfter?: unknown;
    countOnly?: unknown;
    windows: readonly { lease?: unknown; algorithm: string }[];
  },
  ctx: z.RefinementCtx,
) => {
  const issue = (path: (string | number)[], message: string) =>
    ctx.addIssue({ code: 'custom', path, message });
  const leased = l.windows.map((w) => (w.lease === undefined ? !!l.lease : !!w.lease));
  if (!leased.some(Boolean)) return;
  const at = l.lease ? ['lease'] : ['windows', leased.indexOf(true), 'lease'];
  if (l.ban !== undefined)
    issue(
      at,
      'lease and ban exclude each other: a ban is checked in the store, a leased slice is spent here',
    );
  if (l.chargeAfter !== undefined || l.countOnly !== undefined)
    issue(at, 'lease needs requests counted at once (not chargeAfter or countOnly)');
  if (l.lease)
    l.windows.forEach((w, i) => {
      if (w.lease === undefined && w.algorithm !== 'fixed')
        issue(
          ['windows', i, 'lease'],
          `lease applies to algorithm: fixed only: set lease: false on this ${w.algorithm} window`,
        );
    });
};

export const limiter = z.strictObject(limiterBody).superRefine(chargeChecks).superRefine(leaseChecks);
const inlineLimiter = z
  .strictObject({
    name: name.optional().meta({ description: 'Its name in metrics and logs; unset: <route>#<index>.' }),
    ...limiterBody,
  })
  .superRefine(chargeChecks)
  .superRefine(leaseChecks);

const pathPattern = z
  .string()
  .regex(/^\/[^*]*\*?$/, 'a path starting with "/", optionally ending in "*" (prefix match)')
  .meta({ title: 'path pattern' });

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
      .prefault('10m')
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
  name: name.meta({ description: 'Used in logs and metrics.' }),
  hosts: z
    .array(z.string().min(1))
    .default(['*'])
    .meta({ description: '"*", "*.example.com" or an exact host; case-insensitive, the port ignored.' }),
  methods: z.array(z.string().toUpperCase()).default(['*']).meta({ description: 'HTTP methods ("*": any).' }),
  paths: z
    .array(pathPattern)
    .min(1)
    .meta({
      description:
        'Exact paths, or prefixes ending in "*" ("/v1/wp/*"). Matched against the canonical request ' +
        'target (fragment dropped, unreserved escapes decoded, "//" collapsed, "." and ".." resolved), ' +
        'case-insensitively and without ";params"; the query is ignored, and an exact path also matches ' +
        'with a trailing "/".',
    }),
  upstream: name.meta({ description: 'The name of an upstream.' }),
  limiters: z
    .array(z.union([name, inlineLimiter]))
    .prefault([])
    .meta({
      description:
        'Limiter names, or inline limiters (the fields of a limiter, and an optional name). A limiter may appear once per route.',
    }),
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
    .prefault('10s')
    .meta({ description: 'How long the gateway waits for a whole request body; 408 after it.' }),
  responseTimeout: duration
    .refine((d) => d >= 1, 'must be at least 1ms')
    .prefault('30s')
    .meta({
      description:
        'How long a response may wait on a client that takes none of its bytes (a full socket ' +
        'buffer, an HTTP/2 window at zero) before it is cut and its upstream request aborted.',
    }),
  responseBuffer: z
    .strictObject({
      perResponse: byteSize.prefault('256kb').meta({
        description:
          'Bytes of one response the gateway holds for a client that reads slower than the upstream ' +
          'answers, so the upstream connection is freed; past it the upstream waits on the client.',
      }),
      total: byteSize.prefault('64mb').meta({
        description:
          'Bytes all held responses may take in this process (each counts its whole perResponse share). 0: none is held.',
      }),
    })
    .prefault({})
    .meta({
      description:
        'Responses taken from the upstream ahead of a slow client (event streams never are), within ' +
        'the write deadline, so a slow or parked reader does not keep an upstream connection.',
    }),
  maxInFlightPerIp: bound.default(64).meta({
    description:
      'Requests one client IP (IPv6: its prefix) may have in flight in this process, event streams ' +
      'apart; one more gets 429. 0: no bound.',
  }),
  shedAfter: duration.prefault('500ms').meta({
    description:
      "Load shedding: while this process's event loop keeps running this late (two slow turns in a " +
      'row, measured with a 20ms timer), ' +
      'new requests get 503 overloaded with Retry-After before their body is read or they are ' +
      'counted. 0: never shed.',
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

const rateLimitService = z.strictObject({
  host: z
    .string()
    .default('127.0.0.1')
    .meta({ description: 'The address to bind; only Envoy should reach it.' }),
  port: port.default(8081).meta({ description: 'The port; 0 takes any free port.' }),
  overrideKeys: z
    .record(z.string().min(1), z.enum(['token', 'workspace', 'sub', 'ip']))
    .default({ remote_address: 'ip' })
    .meta({
      description:
        'Descriptor entry keys whose value is looked up in the overrides (tiers.overrides), by kind: e.g. ' +
        '{ remote_address: ip, api_key: token, workspace_id: workspace }. Set, it replaces the default.',
    }),
});

const admin = z.strictObject({
  host: z
    .string()
    .default('127.0.0.1')
    .meta({ description: 'The address to bind; keep it off the public network.' }),
  port: port.default(9091).meta({ description: 'The port; 0 takes any free port.' }),
  token: z
    .string()
    .optional()
    .transform((t) => (t === '' ? undefined : t))
    .meta({
      description:
        'The bearer token the admin API wants for anything but GET (overrides, bans). Empty or absent: the API is read-only.',
    }),
});

const publicUrlDescription = (api: string, example: string) =>
  `The ${api} API's public base URL (an http or https origin, e.g. ${example}): its list links ` +
  "(`links`, `meta.path`) start with it. Empty: they are the path and query alone. The request's " +
  'Host header is never used.';

const services = z.strictObject({
  dataDir: z
    .string()
    .min(1)
    .default('./data')
    .meta({
      description:
        'Where the embedded services keep their SQLite database (tollgate.db, shared by the four services and the CLI) ' +
        'and the generated JWT secret.',
    }),
  bootstrapApiKeys: stringList.prefault([]).meta({
    description:
      'API keys that each get a user of the websites and reports APIs at start (containers, tests). ' +
      'With none, and no users yet, the first start creates user "admin" (its key written to first-start.txt in dataDir, mode 0600) ' +
      'and the widget workspace "demo".',
  }),
  maxBodySize: byteSize
    .refine((n) => n >= 1, 'must be at least 1 byte')
    .prefault('5mb')
    .meta({ description: 'The largest request body the embedded services accept (413 beyond).' }),
  websites: z
    .strictObject({
      publicUrl: publicUrl.meta({ description: publicUrlDescription('websites', 'http://localhost:8080') }),
    })
    .prefault({})
    .meta({ description: 'The websites service.' }),
  reports: z
    .strictObject({
      publicUrl: publicUrl.meta({
        description: publicUrlDescription('reports', 'http://analyzer.localhost:8080'),
      }),
      allowPrivateNetworks: z.boolean().default(false).meta({
        description:
          'Let the analyser fetch loopback, private, link-local and other non-public addresses (tests, local use).',
      }),
      fetchTimeout: duration
        .prefault('10s')
        .meta({ description: 'The longest a page fetch (all redirects included) may take.' }),
      maxRedirects: z.coerce
        .number()
        .int()
        .min(0)
        .max(20)
        .default(5)
        .meta({ description: "Redirects followed (each hop's address is checked again)." }),
      maxPageSize: byteSize.prefault('5mb').meta({ description: 'The largest page analysed.' }),
      analysisTimeout: duration
        .refine((d) => d >= 100, 'must be at least 100ms')
        .prefault('20s')
        .meta({
          description:
            'The longest the HTML analysis of one page may take (in a worker thread); then 422 "The page took too long to analyse."',
        }),
      analysisQueue: z.coerce.number().int().min(0).max(10_000).default(64).meta({
        description:
          'Analyses waiting for a worker thread; one more gets 503 "The analyser is busy. Please retry shortly."',
      }),
    })
    .prefault({})
    .meta({ description: 'The report analyser.' }),
  pages: z
    .strictObject({
      secretFile: z
        .string()
        .default('')
        .meta({
          description:
            'The file holding the secret that signs the cookies of the statistics and report pages (sign-in and unlocked ' +
            'password pages); created with a random secret when absent. Empty: pages-cookie.secret in dataDir.',
        }),
      sessionTtl: duration
        .refine((d) => d >= 60_000 && d <= 30 * 86_400_000, 'must be between 1m and 30d')
        .prefault('12h')
        .meta({ description: "How long an owner's sign-in (an API key entered at /_/login) lasts." }),
      unlockTtl: duration
        .refine((d) => d >= 60_000 && d <= 30 * 86_400_000, 'must be between 1m and 30d')
        .prefault('1h')
        .meta({ description: 'How long a password page stays open after its password was entered.' }),
      exports: z
        .strictObject({
          perAddress: z.coerce
            .number()
            .int()
            .min(0)
            .max(1000)
            .default(2)
            .meta({
              description:
                'CSV exports one client address (IPv6: its /64) may download at once in this process; one more gets 429 ' +
                'too_many_exports. 0: no bound.',
            }),
          total: z.coerce.number().int().min(0).max(10_000).default(8).meta({
            description:
              'CSV exports downloading at once in this process, from every address; one more gets 429 too_many_exports. 0: no bound.',
          }),
          stallTimeout: duration
            .refine((d) => d >= 100, 'must be at least 100ms')
            .prefault('30s')
            .meta({
              description:
                'An export whose client reads nothing for this long is cut (the connection closed) and its slot freed.',
            }),
        })
        .prefault({})
        .meta({
          description:
            'The CSV exports of the statistics pages: streamed in pages from the database, and bounded at once.',
        }),
    })
    .prefault({})
    .meta({ description: 'The statistics pages (websites host) and report pages (analyzer host).' }),
  bulksync: z
    .strictObject({
      bootstrapToken: z
        .string()
        .default('')
        .meta({ description: 'A "<id>|<secret>" workspace token ensured at start (revived if revoked).' }),
      bootstrapWorkspace: name
        .default('default')
        .meta({ description: 'The workspace of the bootstrap token (created if missing).' }),
    })
    .prefault({})
    .meta({ description: 'The bulk-sync service.' }),
  smtp: z
    .strictObject({
      host: z.string().default('').meta({
        description:
          'The SMTP server the e-mail reports are sent through. Empty: no e-mail; the reports are off (logged once at start).',
      }),
      port: port.default(587).meta({ description: 'The SMTP port (587 for STARTTLS, 465 for TLS).' }),
      tls: z
        .enum(['starttls', 'secure', 'none'])
        .default('starttls')
        .meta({
          description:
            'starttls: upgrade the connection with STARTTLS (required); secure: TLS from the first byte (port 465); ' +
            'none: plain text (a local relay only).',
        }),
      user: z.string().default('').meta({ description: 'The SMTP user; empty: no authentication.' }),
      password: z.string().default('').meta({
        description: 'The SMTP password; set it from the environment (${SMTP_PASSWORD}), never in the file.',
      }),
      from: z
        .string()
        .min(1)
        .default('tollgate <reports@localhost>')
        .meta({ description: 'The From address of the reports.' }),
    })
    .prefault({})
    .meta({ description: 'The SMTP server of the e-mail reports.' }),
  emailReports: z
    .strictObject({
      frequency: z.enum(['daily', 'weekly', 'monthly']).default('weekly').meta({
        description:
          'How often each website with e-mail reports on gets a summary of the past period (UTC): the day before, the week (Monday to Sunday) or the calendar month.',
      }),
      checkInterval: duration
        .refine((d) => d >= 1000, 'must be at least 1s')
        .prefault('5m')
        .meta({ description: 'How often a gateway process looks for reports due.' }),
      retries: z.coerce.number().int().min(0).max(10).default(3).meta({
        description: 'Further attempts of a failed send, each after a doubled delay.',
      }),
      retryDelay: duration.prefault('30s').meta({ description: 'The delay before the first retry.' }),
    })
    .prefault({})
    .meta({
      description:
        "Periodic e-mail reports of the websites' statistics to their owners. One gateway process (a lease in the database) sends them; each period is sent once per website.",
    }),
  widget: z
    .strictObject({
      sessionsPerWorkspace: bound.default(20_000).meta({
        description:
          'New visitor sessions (widget init) one workspace may start per budgetPeriod; one more gets 429 ' +
          'workspace_budget_exceeded. Counted in the database, so every process shares it. 0: no bound.',
      }),
      messagesPerWorkspace: bound.default(200_000).meta({
        description:
          "Visitor messages, events and leads one workspace's visitors may store per budgetPeriod; one more gets 429 " +
          'workspace_budget_exceeded. 0: no bound.',
      }),
      budgetPeriod: duration
        .refine((d) => d >= 1000, 'must be at least 1s')
        .prefault('1h')
        .meta({ description: 'The fixed window of the per-workspace budgets.' }),
    })
    .prefault({})
    .meta({
      description:
        "The widget's storage budgets per workspace (the gateway's limiters cannot see the workspace: it is in the body).",
    }),
  storage: z
    .strictObject({
      maxDistinctValues: positiveInt.default(1000).meta({
        description:
          'Distinct values the analytics collector stores per website, dimension (pages, referrers, …) and UTC day; ' +
          'a new value past it counts under "(other)".',
      }),
      recentVisits: duration
        .refine((d) => d >= 60_000, 'must be at least 1m')
        .prefault('30m')
        .meta({ description: 'How long the realtime view keeps a visit (then it is deleted).' }),
      widgetEvents: duration.prefault('90d').meta({
        description:
          'How long raw widget events are kept (then deleted, in bounded batches). 0: kept forever.',
      }),
      walCheckpointSize: byteSize.prefault('16mb').meta({
        description:
          "Past this size the database's write-ahead log is checkpointed and truncated (wal_checkpoint(TRUNCATE)).",
      }),
      housekeepingInterval: duration
        .refine((d) => d >= 1000, 'must be at least 1s')
        .prefault('1m')
        .meta({ description: 'How often the log size is checked and expired rows are deleted.' }),
    })
    .prefault({})
    .meta({ description: "Bounds on what the services' database keeps." }),
});

const workers = z.union([z.literal('auto'), z.coerce.number().int().min(1).max(256)]).meta({
  description:
    'Processes sharing the listeners through node:cluster, or "auto" (one per CPU). More than one needs ' +
    'store.redis.url or store.redis.cluster (with the in-process store the start is refused: each worker ' +
    'would count on its own). Dead workers are restarted.',
});

export const configSchema = z.strictObject({
  listeners: z.array(listener).min(1).meta({ description: 'The public listeners (at least one).' }),
  admin: admin.optional().meta({
    description:
      'The admin listener (GET /metrics, GET /healthz), off the public port. Absent: no admin listener.',
  }),
  rateLimitService: rateLimitService.optional().meta({
    description:
      "Envoy's rate-limit service (envoy.service.ratelimit.v3.RateLimitService, gRPC): answers for " +
      'the limiters that name descriptors, counting in the same store. Absent: not served.',
  }),
  workers: workers.default(1),
  shadow: z
    .boolean()
    .default(false)
    .meta({
      description:
        'The global shadow switch: every limiter counts and reports but never refuses. ' +
        'Try a new config in production and watch shadow_limited in the metrics before enforcing it.',
    }),
  reload: z
    .strictObject({
      watch: z
        .boolean()
        .default(true)
        .meta({ description: 'Reload when the config file changes; SIGHUP reloads either way.' }),
    })
    .prefault({})
    .meta({ description: 'Hot reload of this file.' }),
  log: z
    .strictObject({
      level: z
        .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
        .default('info')
        .meta({ description: 'The pino log level. info logs one line per request.' }),
      keyParts: z
        .boolean()
        .default(false)
        .meta({
          description:
            'Access-log lines also carry the Host header and the hashed key parts of the request (ip and user_agent always, ' +
            "and the parts its limiters use), hashed as the store keys are, the body's declared size (bytes), the cost a chargeAfter " +
            "upstream reported (charged), and what the verified credentials said: the tier they name (tier), the workspace token's id " +
            '(token, never its secret) and workspace, the JWT subject (sub); null when checked and none. What `tollgate replay` reads ' +
            'to replay a candidate config. Never a raw credential.',
        }),
      clientAddress: z
        .enum(['full', 'hashed', 'none'])
        .default('full')
        .meta({
          description:
            "The access log's client field: the address as the limiters resolved it (full), its digest as the ip key part " +
            'is hashed (hashed: lines of one address still match, the address is not kept), or left out (none).',
        }),
    })
    .prefault({})
    .meta({ description: 'JSON lines on stdout.' }),
  shutdown: z
    .strictObject({
      drainTimeout: duration.prefault('10s').meta({
        description:
          'On SIGTERM or SIGINT, how long requests in flight may finish before connections are closed.',
      }),
    })
    .prefault({})
    .meta({ description: 'The graceful stop on SIGTERM or SIGINT: stop accepting, drain, exit 0.' }),
  store: store.prefault({}).meta({
    description: 'Where windows are counted: Redis Cluster, Redis, or (neither set) this process.',
  }),
  identity: identity.prefault({}).meta({ description: 'How the key parts of a request are derived.' }),
  tiers: tiers.prefault({}).meta({
    description:
      "How a request's tier is chosen (an override, a JWT claim, the workspace token's plan), for windows with tiers.",
  }),
  services: services.prefault({}).meta({
    description:
      'The embedded services (websites, reports, widget, bulk sync). Read at start: a reload that changes them warns that they need a restart.',
  }),
  requests: requests.prefault({}).meta({
    description: 'Request bodies and requests in flight: the guards against slow and greedy clients.',
  }),
  streams: streams.prefault({}).meta({
    description: 'Event streams (routes with stream: true): open streams per visitor session and per IP.',
  }),
  upstreams: z.record(name, upstream).meta({ description: 'Where routes forward, by name.' }),
  limiters: z
    .record(name, limiter)
    .prefault({})
    .meta({ description: 'Named limiters that routes refer to.' }),
  cors: z
    .record(name, corsPolicy)
    .default({})
    .meta({ description: 'Named CORS policies, which routes refer to with `cors: <name>`.' }),
  routes: z
    .array(route)
    .min(1)
    .meta({ description: 'Ordered: the first route whose host, method and path match wins.' }),
});

export type GatewayConfig = z.output<typeof configSchema>;
export type LimiterConfig = z.output<typeof limiter>;
export type RouteConfig = z.output<typeof route>;
export type UpstreamConfig = z.output<typeof upstream>;
export type KeyPart = z.output<typeof keyPart>;
export type JwtConfig = z.output<typeof jwt>;
export type TiersConfig = z.output<typeof tiers>;
export type TierJwtConfig = z.output<typeof tierJwt>;
export type FailurePolicy = z.output<typeof failurePolicy>;
export type ListenerConfig = z.output<typeof listener>;
export type ListenerTlsConfig = z.output<typeof listenerTls>;
export type ListenerHttp2Config = z.output<typeof listenerHttp2>;
export type CorsPolicyConfig = z.output<typeof corsPolicy>;
export type DescriptorPatternConfig = z.output<typeof descriptorPattern>;
export type RateLimitServiceConfig = z.output<typeof rateLimitService>;
export type RedisTlsConfig = z.output<typeof redisTls>;
