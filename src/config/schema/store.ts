// The counting store: in-process or Redis (single, TLS, Cluster), and what happens when it fails.
import { z } from 'zod';
import { bound, duration, positiveInt, stringList } from './primitives.js';

export const failurePolicy = z.enum(['open', 'closed', 'local']);

export const redisTls = z.strictObject({
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
  batchesInFlight: bound
    .max(64)
    .default(1)
    .meta({
      description:
        'Batches out at once to one Redis (not a cluster; a batch of more than 256 requests goes as ' +
        'several script calls). A batch due while that many are unanswered stays open and the next turns ' +
        'join it: under load, fewer and larger calls (less Redis CPU per request), each request waiting up ' +
        'to one more round trip; an idle gateway waits for nothing. Batches waiting behind one that fails ' +
        'commandTimeout fail with it. 0: no bound (every batch goes at once).',
    }),
  functions: z
    .boolean()
    .default(true)
    .meta({
      description:
        'Run the batch script as a Redis function (FCALL; Redis 7 or later), falling back to EVALSHA where ' +
        'Redis answers that it has no functions (unknown command, or the ACL). false: EVALSHA from the ' +
        'start, for a proxy in front of Redis that refuses FCALL in words of its own.',
    }),
  connectTimeout: duration
    .refine((d) => d >= 1, 'must be at least 1ms')
    .prefault('1s')
    .meta({
      description:
        'The connection timeout. At start the gateway waits up to this long for Redis, then starts anyway.',
    }),
});

export const store = z.strictObject({
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
