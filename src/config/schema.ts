import { z } from 'zod';
import { admin, rateLimitService, requests, streams } from './schema/gateway-sections.js';
import type { jwt, tierJwt } from './schema/identity.js';
import { identity, tiers } from './schema/identity.js';
import type { descriptorPattern } from './schema/limiter.js';
import { limiter } from './schema/limiter.js';
import type { listenerHttp2, listenerTls } from './schema/listener.js';
import { listener } from './schema/listener.js';
import type { keyPart } from './schema/primitives.js';
import { duration, name } from './schema/primitives.js';
import { corsPolicy, route } from './schema/route.js';
import { services } from './schema/services.js';
import type { failurePolicy, redisTls } from './schema/store.js';
import { store } from './schema/store.js';
import { upstream } from './schema/upstream.js';

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
