import {
  Server,
  ServerCredentials,
  status as grpcStatus,
  type sendUnaryData,
  type ServerUnaryCall,
} from '@grpc/grpc-js';
import type { RateLimitServiceConfig } from '../config/schema.js';
import type { RateLimitAnswer } from '../envoy/answer.js';
import {
  CallError,
  rateLimitServiceDefinition,
  shouldRateLimit,
  StoreFailedOpen,
  type RateLimitRequest,
  type RateLimitServiceContext,
} from '../envoy/service.js';
import { throttledWarn } from '../logger.js';
import { ListenError } from './listen.js';

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
