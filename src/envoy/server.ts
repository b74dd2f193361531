import { fileURLToPath } from 'node:url';
import {
  Server,
  ServerCredentials,
  status as grpcStatus,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { Logger } from 'pino';
import type { RuleTable } from '../rules/compile.js';
import type { RateLimitServiceConfig } from '../config/schema.js';
import { ListenError } from '../http/listen.js';
import { throttledWarn } from '../logger.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import type { WindowResult, WindowStore } from '../store/window-store.js';
import { answerFromResults, answerWithoutStore, type RateLimitAnswer } from './answer.js';
import {
  planDescriptors,
  type DescriptorEntry,
  type DescriptorMatch,
  type DescriptorPlan,
} from './descriptor-table.js';

/** RateLimitRequest as proto-loader gives it (camelCase, defaults filled in). */
export interface RateLimitRequest {
  readonly domain: string;
  readonly descriptors: readonly { readonly entries: readonly DescriptorEntry[] }[];
  readonly hitsAddend: number;
}

/** The .proto ships beside this module: `npm run build` copies it into dist/envoy/. */
const PROTO = fileURLToPath(new URL('./rls.proto', import.meta.url));
export const SERVICE_NAME = 'envoy.service.ratelimit.v3.RateLimitService';
/** How proto-loader maps the messages: the same options for the server and the tests' client. */
export const PROTO_OPTIONS = { keepCase: false, enums: String, longs: Number, defaults: true } as const;

/** The service definition of rls.proto. */
export function rateLimitServiceDefinition(): ServiceDefinition {
  const definition = loadSync(PROTO, PROTO_OPTIONS);
  return definition[SERVICE_NAME] as ServiceDefinition;
}

export interface RateLimitServiceContext {
  /** The rule table in force: a reload swaps it, as for HTTP requests. */
  readonly current: () => { readonly table: RuleTable; readonly keyPrefix: string };
  readonly store: WindowStore;
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
}

/** A refusal of the call itself, as a gRPC status. */
export class CallError extends Error {
  constructor(
    readonly code: grpcStatus,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Decides one ShouldRateLimit call: matches its descriptors to limiters, checks and counts them in
 * the store (one call, shared with the HTTP requests of the same turn), and answers as Envoy's
 * filter expects. Throws CallError for a malformed request, or when the store failed and a matched
 * limiter fails closed.
 */
export async function shouldRateLimit(
  ctx: RateLimitServiceContext,
  request: RateLimitRequest,
): Promise<RateLimitAnswer> {
  // Envoy's own service refuses these two as well.
  if (request.domain === '') throw new CallError(grpcStatus.INVALID_ARGUMENT, 'domain must not be empty');
  if (request.descriptors.length === 0) {
    throw new CallError(grpcStatus.INVALID_ARGUMENT, 'descriptors must not be empty');
  }
  const { table, keyPrefix } = ctx.current();
  const matches = request.descriptors.map((d) => table.descriptors.match(request.domain, d.entries));
  const hits = request.hitsAddend > 0 ? request.hitsAddend : 1; // unset (0) means 1
  const plan = planDescriptors(matches, hits, keyPrefix);
  if (plan.requests.length === 0) return answerWithoutStore(request.descriptors.length);
  const limiters = [...new Set(matches.flatMap((m) => (m ? [m.limiter] : [])))];
  let answer: RateLimitAnswer;
  let results: WindowResult[];
  try {
    results = await ctx.store.hit(plan.requests);
    answer = answerFromResults(plan, results, Date.now());
  } catch (err) {
    for (const l of limiters) ctx.metrics.limiterDecision(l.name, 'store_error');
    if (limiters.some((l) => !l.shadow && l.onStoreError === 'closed')) {
      throw new CallError(grpcStatus.UNAVAILABLE, `rate-limit store failed: ${(err as Error).message}`);
    }
    ctx.metrics.uncounted();
    throw new StoreFailedOpen(err, answerWithoutStore(request.descriptors.length));
  }
  recordDecisions(ctx.metrics, matches, plan, results, answer);
  return answer;
}

/** The store failed, and every matched limiter lets requests through: the answer is OK, the failure logged. */
class StoreFailedOpen extends Error {
  constructor(
    readonly failure: unknown,
    readonly answer: RateLimitAnswer,
  ) {
    super('store failed open');
  }
}

/**
 * Each matched limiter's verdict, in the same metric as HTTP requests: limited (a descriptor of
 * its was over the limit), shadow_limited (a shadow limiter's window was spent), else allowed.
 */
function recordDecisions(
  metrics: GatewayMetrics,
  matches: readonly (DescriptorMatch | undefined)[],
  plan: DescriptorPlan,
  results: readonly WindowResult[],
  answer: RateLimitAnswer,
): void {
  const rank = { allowed: 0, shadow_limited: 1, limited: 2 } as const;
  const verdicts = new Map<string, keyof typeof rank>();
  matches.forEach((m, i) => {
    if (!m) return;
    let decision: keyof typeof rank = 'allowed';
    if (answer.statuses[i]!.code === 'OVER_LIMIT') decision = 'limited';
    else if (m.limiter.shadow && plan.descriptors[i]!.some((w) => !results[w.request]!.allowed)) {
      decision = 'shadow_limited';
    }
    const before = verdicts.get(m.limiter.name);
    if (before === undefined || rank[decision] > rank[before]) verdicts.set(m.limiter.name, decision);
  });
  for (const [name, decision] of verdicts) metrics.limiterDecision(name, decision);
}

/** The gRPC server of Envoy's rate-limit service, on its own port (rateLimitService). */
export class RateLimitServer {
  private constructor(
    private readonly server: Server,
    readonly host: string,
    readonly port: number,
  ) {}

  static async start(config: RateLimitServiceConfig, ctx: RateLimitServiceContext): Promise<RateLimitServer> {
    const server = new Server();
    const warn = throttledWarn(ctx.logger, 'rate-limit store failed');
    server.addService(rateLimitServiceDefinition(), {
      ShouldRateLimit(
        call: ServerUnaryCall<RateLimitRequest, RateLimitAnswer>,
        callback: sendUnaryData<RateLimitAnswer>,
      ) {
        shouldRateLimit(ctx, call.request).then(
          (answer) => callback(null, answer),
          (err: unknown) => {
            if (err instanceof StoreFailedOpen) {
              warn({ rls: true, err: (err.failure as Error).message });
              callback(null, err.answer);
            } else if (err instanceof CallError) {
              if (err.code === grpcStatus.UNAVAILABLE) warn({ rls: true, err: err.message });
              callback({ code: err.code, details: err.message });
            } else {
              ctx.logger.error({ err }, 'rate-limit call failed');
              callback({ code: grpcStatus.INTERNAL, details: 'the rate-limit service failed' });
            }
          },
        );
      },
    });
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`${host}:${config.port}`, ServerCredentials.createInsecure(), (err, bound) =>
        err ? reject(bindError(config, err)) : resolve(bound),
      ),
    );
    ctx.logger.info({ listener: 'rateLimitService', host: config.host, port }, 'listening');
    return new RateLimitServer(server, config.host, port);
  }

  /** "host:port", as a gRPC client dials it. */
  get address(): string {
    const host = this.host.includes(':') ? `[${this.host}]` : this.host;
    return `${host === '0.0.0.0' ? '127.0.0.1' : host === '[::]' ? '[::1]' : host}:${this.port}`;
  }

  /** Stops accepting calls and lets those in flight finish, for up to `graceMs`; then cuts them. */
  close(graceMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, graceMs);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** gRPC names the system error only in its message ("… [listen EADDRINUSE: …]"). */
function bindError(config: RateLimitServiceConfig, err: Error): ListenError {
  const code = /\b(E[A-Z]+):/.exec(err.message)?.[1];
  return new ListenError({ host: config.host, port: config.port, what: 'rate-limit service' }, code);
}
