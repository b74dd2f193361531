import type { IncomingHttpHeaders } from 'node:http';
import { Http2ServerRequest, Http2ServerResponse, type ServerHttp2Stream } from 'node:http2';
import type { Readable } from 'node:stream';

/**
 * The HTTP/2 compatibility request, made to look like an HTTP/1.1 one to the request path, so it is
 * identified, limited and forwarded by exactly the same code:
 * - the pseudo-headers (:method, :path, :scheme, :authority) are not headers: `method` and `url`
 *   still read them, and :authority becomes Host (what routing and X-Forwarded-Host use);
 * - a body without Content-Length is announced as chunked, as HTTP/1.1 would frame it (in HTTP/2
 *   a body is there when HEADERS did not end the stream), so it is bounded and read like one.
 * Connection-specific headers cannot arrive (nghttp2 refuses such a request); the hop-by-hop
 * filter of forwarding removes the rest (TE, Proxy-Authorization, …) as for HTTP/1.1.
 */
export class GatewayHttp2Request extends Http2ServerRequest {
  constructor(
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    options: ConstructorParameters<typeof Readable>[0],
    rawHeaders: readonly string[],
  ) {
    super(stream, headers, options ?? {}, rawHeaders);
    Object.defineProperty(this, 'headers', {
      value: http1Headers(headers, stream.endAfterHeaders),
      enumerable: true,
    });
  }
}

/** The headers of an HTTP/2 request as HTTP/1.1 would carry them (see GatewayHttp2Request). */
export function http1Headers(h2: IncomingHttpHeaders, endAfterHeaders: boolean): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const name in h2) {
    if (name.charCodeAt(0) !== 58 /* ":" */) out[name] = h2[name];
  }
  const authority = h2[':authority'];
  if (typeof authority === 'string' && authority !== '') out.host = authority;
  if (!endAfterHeaders && out['content-length'] === undefined) out['transfer-encoding'] = 'chunked';
  return out;
}

/** A stream the gateway itself reset (an upstream failing mid-body): not the client's reset. */
export const resetByGateway = new WeakSet<ServerHttp2Stream>();

/**
 * The HTTP/2 compatibility response with what the request path reads of an HTTP/1.1 one:
 * `closed` and `destroyed` (the client reset the stream while the limiter waited), and a
 * `writableFinished` that is false for a stream the client reset. A Connection
 * header the gateway's refusals send is dropped by Node: in HTTP/2 they end only their stream.
 */
export class GatewayHttp2Response extends Http2ServerResponse {
  override destroy(error?: Error): this {
    resetByGateway.add(this.stream);
    super.destroy(error);
    return this;
  }
}

// Accessors on the prototype: node's types declare these as plain properties of the base class.
Object.defineProperties(GatewayHttp2Response.prototype, {
  closed: {
    get(this: GatewayHttp2Response): boolean {
      return this.stream.closed || this.stream.destroyed;
    },
  },
  destroyed: {
    get(this: GatewayHttp2Response): boolean {
      return this.stream.destroyed;
    },
  },
  // A reset stream's writable side is ended by node (so it reads as finished): a response cut
  // off by the client must read as unfinished, so the upstream request is cancelled.
  writableFinished: {
    get(this: GatewayHttp2Response): boolean {
      return this.stream.writableFinished && !this.stream.aborted;
    },
  },
});
