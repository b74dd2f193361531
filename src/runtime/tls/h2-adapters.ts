import type { IncomingHttpHeaders } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';

/**
 * The headers of an HTTP/2 request as HTTP/1.1 would carry them, so it is identified, limited and
 * forwarded by exactly the same code:
 * - the pseudo-headers (:method, :path, :scheme, :authority) are not headers (the request's
 *   `method` and `url` read them), and :authority becomes Host (what routing and X-Forwarded-Host use);
 * - a body without Content-Length is announced as chunked, as HTTP/1.1 would frame it (in HTTP/2
 *   a body is there when HEADERS did not end the stream), so it is bounded and read like one.
 * Connection-specific headers cannot arrive (nghttp2 refuses such a request); the hop-by-hop
 * filter of forwarding removes the rest (TE, Proxy-Authorization, …) as for HTTP/1.1.
 */
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
