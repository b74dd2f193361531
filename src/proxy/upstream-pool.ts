import type { IncomingMessage, ServerResponse } from 'node:http';
import { Pool } from 'undici';
import type { UpstreamConfig } from '../config/schema.js';
import { limitBody } from './body-limit.js';
import type { LiveStreams } from './live-streams.js';
import { upstreamRequestHeaders, type ForwardedFacts } from './headers.js';
import { ResponseRelay, type ForwardOutcome } from './response-relay.js';

export type { ForwardOutcome } from './response-relay.js';

export interface ForwardOptions {
  /** The canonical request target (path and query) to send upstream. */
  readonly target: string;
  /** Added to the response, replacing any X-RateLimit-* the upstream sent. */
  readonly extraHeaders: Record<string, string>;
  /** Largest body of unknown length forwarded (0: no bound); past it the upstream request is aborted. */
  readonly maxBodySize: number;
  /** Where an event-stream response is registered, so a shutdown can end it. */
  readonly liveStreams?: LiveStreams;
  /** The route has a CORS policy: the gateway's CORS headers are the only ones (the upstream's are dropped). */
  readonly cors?: boolean;
}

/**
 * Forwards to one upstream (a config `upstreams` entry) through an undici Pool of keep-alive
 * connections: streams bodies both ways, cancels when the client leaves.
 */
export class UpstreamPool {
  readonly pool: Pool;
  readonly #basePath: string;

  constructor(
    readonly name: string,
    private readonly cfg: UpstreamConfig,
  ) {
    this.#basePath = new URL(cfg.url).pathname.replace(/\/$/, '');
    this.pool = new Pool(new URL(cfg.url).origin, {
      connections: cfg.connections,
      connectTimeout: cfg.connectTimeout,
      headersTimeout: cfg.headersTimeout,
      bodyTimeout: cfg.bodyTimeout,
      keepAliveTimeout: cfg.keepAliveTimeout,
    });
  }

  /** Forwards the request and streams the response into `res`. Settles when the exchange ends; never throws. */
  forward(
    req: IncomingMessage,
    res: ServerResponse,
    facts: ForwardedFacts,
    { target, extraHeaders, maxBodySize, liveStreams, cors = false }: ForwardOptions,
  ): Promise<ForwardOutcome> {
    // The client may have left while the limiter waited on the store: then never start the exchange.
    if (res.closed || res.destroyed || req.socket.destroyed) return Promise.resolve({ kind: 'aborted' });
    const length = req.headers['content-length'];
    const hasBody = length !== undefined ? length !== '0' : req.headers['transfer-encoding'] !== undefined;
    const headers = upstreamRequestHeaders(req.headers, facts, this.cfg.preserveHost);
    const relay = new ResponseRelay(res, extraHeaders, facts.requestId, liveStreams, cors);
    this.pool.dispatch(
      {
        path: this.#basePath + target,
        method: req.method ?? 'GET',
        headers: headers as Record<string, string>,
        // A body of unknown length is counted on its way through (a declared one was checked already).
        body: !hasBody ? null : maxBodySize > 0 && length === undefined ? limitBody(req, maxBodySize) : req,
      },
      relay,
    );
    return relay.done;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
