import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { Pool } from 'undici';
import type { UpstreamConfig } from '../config/schema.js';
import type { LiveStreams } from './live-streams.js';
import { upstreamRequestHeaders, type ForwardedFacts } from './headers.js';
import { pacedConnector } from './connect-pacing.js';
import { requestGone, type EndHooks } from './request-end.js';
import { streamRequestOf } from './stream-request.js';
import type { ResponseBufferLimits, ResponseBuffers } from './response-buffers.js';
import { ResponseRelay, type ForwardOutcome, type ResponseHook } from './response-relay.js';

export type { ForwardOutcome, ResponseHook } from './response-relay.js';

export interface ForwardOptions {
  /** The canonical request target (path and query) to send upstream. */
  readonly target: string;
  /** Added to the response, replacing any X-RateLimit-* the upstream sent. */
  readonly extraHeaders: Record<string, string>;
  /**
   * The request body: null (none), a Buffer read whole at the gateway (sent with its exact
   * Content-Length), or the body streamed unread (a route bound of 0): the request itself, or an
   * HTTP/2 stream's body.
   */
  readonly body: Buffer | Readable | null;
  /** An event stream: forwarded on the stream pool, apart from ordinary requests' connections. */
  readonly stream: boolean;
  /** Where an event-stream response is registered, so a shutdown can end it. */
  readonly liveStreams?: LiveStreams;
  /** The route has a CORS policy: the gateway's CORS headers are the only ones (the upstream's are dropped). */
  readonly cors?: boolean;
  /** The write deadline (ms): a response the client takes no bytes of for this long is cut. */
  readonly responseTimeout: number;
  /** Where an ordinary response (never an event stream) takes its share when its client falls behind. */
  readonly buffers?: ResponseBuffers;
  readonly bufferLimits?: ResponseBufferLimits;
  /** Told of the upstream's response before it is relayed (a post-charge); strips the headers it names. */
  readonly hook?: ResponseHook;
  /** Where the request's end is watched from a 'close' listener already on the response (request-end.ts). */
  readonly ends?: EndHooks;
}

/**
 * Forwards to one upstream (a config `upstreams` entry) through two undici Pools of keep-alive
 * connections: one for ordinary requests (`connections`) and, made on first use, one for event
 * streams (`streamConnections`), so long-lived streams never take the connections ordinary requests
 * need. Streams responses back, cancels when the client leaves.
 */
export class UpstreamPool {
  readonly pool: Pool;
  #streamPool: Pool | undefined;
  readonly #basePath: string;
  readonly #origin: string;

  constructor(
    readonly name: string,
    private readonly cfg: UpstreamConfig,
  ) {
    this.#basePath = new URL(cfg.url).pathname.replace(/\/$/, '');
    this.#origin = new URL(cfg.url).origin;
    this.pool = this.#newPool(cfg.connections);
  }

  #newPool(connections: number): Pool {
    const { connectTimeout, headersTimeout, bodyTimeout, keepAliveTimeout, allowH2, connectRate } = this.cfg;
    return new Pool(this.#origin, {
      connections,
      allowH2,
      // The pool may fill at once; past that, new connections come at connectRate per second.
      connect: pacedConnector({ allowH2, timeout: connectTimeout }, connections, connectRate),
      headersTimeout,
      bodyTimeout,
      keepAliveTimeout,
    });
  }

  /** The pool event streams are forwarded on (made on the first stream). */
  get streamPool(): Pool {
    this.#streamPool ??= this.#newPool(this.cfg.streamConnections);
    return this.#streamPool;
  }

  /** Forwards the request and streams the response into `res`. Settles when the exchange ends; never throws. */
  forward(
    req: IncomingMessage,
    res: ServerResponse,
    facts: ForwardedFacts,
    options: ForwardOptions,
  ): Promise<ForwardOutcome> {
    // An HTTP/2 stream arrives before the rest of the frames read with it: a RST_STREAM right
    // behind its HEADERS (the rapid-reset attack) is processed only after this turn. Dispatching
    // first would start an upstream connection for every cancelled stream; after one turn the
    // stream's reset is known and nothing is dispatched for it. (A body read at the gateway has
    // waited that turn already.)
    const framesRead = streamRequestOf(req)?.framesRead();
    if (framesRead) return framesRead.then(() => this.#dispatch(req, res, facts, options));
    return this.#dispatch(req, res, facts, options);
  }

  #dispatch(
    req: IncomingMessage,
    res: ServerResponse,
    facts: ForwardedFacts,
    {
      target,
      extraHeaders,
      body,
      stream,
      liveStreams,
      cors = false,
      responseTimeout,
      buffers,
      bufferLimits,
      hook,
      ends,
    }: ForwardOptions,
  ): Promise<ForwardOutcome> {
    // The client may have left while the limiter waited on the store: then never start the exchange.
    if (requestGone(req, res)) return Promise.resolve({ kind: 'aborted' });
    const headers = upstreamRequestHeaders(req.headers, facts, this.cfg.preserveHost);
    // A body read whole goes with its exact length, also when the client sent it chunked.
    if (body instanceof Buffer) headers['content-length'] = String(body.length);
    const relay = new ResponseRelay(
      req,
      res,
      responseTimeout,
      extraHeaders,
      facts.requestId,
      liveStreams,
      cors,
      stream ? undefined : buffers,
      bufferLimits,
      hook,
      ends,
    );
    (stream ? this.streamPool : this.pool).dispatch(
      {
        path: this.#basePath + target,
        method: req.method ?? 'GET',
        headers: headers as Record<string, string>,
        body,
      },
      relay,
    );
    return relay.done;
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.close(), this.#streamPool?.close()]);
  }

  /** At shutdown, after the drain: a request still in flight has no client left, so nothing is waited for. */
  async destroy(): Promise<void> {
    await Promise.all([this.pool.destroy(), this.#streamPool?.destroy()]);
  }
}
