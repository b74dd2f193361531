import type { IncomingHttpHeaders } from 'node:http';
import { Http2ServerRequest, type ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';

/**
 * The HTTP/2 compatibility request, made to look like an HTTP/1.1 one to the request path, so it is
 * identified, limited and forwarded by exactly the same code:
 * - the pseudo-headers (:method, :path, :scheme, :authority) are not headers: `method` and `url`
 *   still read them, and :authority becomes Host (what routing and X-Forwarded-Host use);
 * - a body without Content-Length is announced as chunked, as HTTP/1.1 would frame it (in HTTP/2
 *   a body is there when HEADERS did not end the stream), so it is bounded and read like one.
 * Connection-specific headers cannot arrive (nghttp2 refuses such a request); the hop-by-hop
 * filter of forwarding removes the rest (TE, Proxy-Authorization, …) as for HTTP/1.1.
 * Made by the listener's 'stream' handler (h2-stream.ts), with a StreamResponse: node's own
 * compatibility response is not used.
 */
export class GatewayHttp2Request extends Http2ServerRequest {
  readonly #socket: Socket;

  /** `socket`: the connection's TLS socket (node's own `socket` is a proxy made per stream). */
  constructor(
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    rawHeaders: readonly string[],
    socket: Socket,
  ) {
    super(stream, headers, {}, rawHeaders);
    this.#socket = socket;
    Object.defineProperty(this, 'headers', {
      value: http1Headers(headers, stream.endAfterHeaders),
      enumerable: true,
    });
  }

  /**
   * The connection's socket, the same object for every stream of it: the peer is worked out once
   * per connection (identity/peer.ts keys its cache by the socket), as for HTTP/1.1.
   */
  // @ts-expect-error node's types declare `socket` a plain property of the base class; it is an accessor there too.
  override get socket(): Socket {
    return this.#socket;
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
