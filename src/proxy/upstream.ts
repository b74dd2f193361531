import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Pool, errors as undiciErrors } from 'undici';
import type { UpstreamConfig } from '../config/schema.js';
import { endToEnd, upstreamRequestHeaders, type ForwardedFacts } from './headers.js';

export type ForwardOutcome =
  | { readonly kind: 'ok'; readonly status: number }
  | { readonly kind: 'unreachable' | 'timeout'; readonly error: Error }
  | { readonly kind: 'aborted' };

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const GATEWAY_HEADER = /^x-ratelimit-/;

/** One upstream service behind an undici Pool: streams bodies both ways, cancels when the client leaves. */
export class Upstream {
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

  /**
   * Forwards the request and streams the response into `res`, adding `extraHeaders` (which replace
   * any X-RateLimit-* the upstream sent). Settles when the exchange ends; never throws.
   */
  async forward(
    req: IncomingMessage,
    res: ServerResponse,
    facts: ForwardedFacts,
    extraHeaders: Record<string, string>,
  ): Promise<ForwardOutcome> {
    const abort = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) abort.abort();
    };
    res.once('close', onClose);
    // The client may have left while the limiter waited on the store: then never start the exchange.
    if (res.closed || res.destroyed || req.socket.destroyed) {
      res.off('close', onClose);
      return { kind: 'aborted' };
    }
    const length = req.headers['content-length'];
    const hasBody = length !== undefined ? length !== '0' : req.headers['transfer-encoding'] !== undefined;
    const headers = upstreamRequestHeaders(req.headers, facts, this.cfg.preserveHost);
    delete headers['expect']; // Node's server already answered 100-continue
    try {
      let status = 0;
      await this.pool.stream(
        {
          path: this.#basePath + (req.url ?? '/'),
          method: req.method as 'GET',
          headers: headers as Record<string, string>,
          body: hasBody ? req : null,
          signal: abort.signal,
        },
        ({ statusCode, headers: upstreamHeaders }) => {
          status = statusCode;
          const out: OutgoingHttpHeaders = endToEnd(upstreamHeaders, (n) => GATEWAY_HEADER.test(n));
          for (const name in extraHeaders) out[name] = extraHeaders[name];
          out['x-request-id'] = facts.requestId; // the id the upstream was given, not one it chose
          res.writeHead(statusCode, out);
          return res;
        },
      );
      return { kind: 'ok', status };
    } catch (err) {
      const error = err as Error & { code?: string };
      if (abort.signal.aborted || error instanceof undiciErrors.RequestAbortedError)
        return { kind: 'aborted' };
      if (res.headersSent) res.destroy(error); // mid-body failure: the client must not see a truncated success
      return { kind: TIMEOUT_CODES.has(error.code ?? '') ? 'timeout' : 'unreachable', error };
    } finally {
      res.off('close', onClose);
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
