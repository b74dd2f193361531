import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Http2SecureServer, Http2Session, ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { StreamRequest } from './h2-request.js';
import { StreamResponse } from './h2-response.js';

/** The request path's handler, as an HTTP/2 stream gives it its request and response. */
export type StreamRequestListener = (req: StreamRequest, res: StreamResponse) => void;

/**
 * Serves each HTTP/2 stream of `server` with `handle` through the core API (a StreamRequest and a
 * StreamResponse), instead of node's compatibility layer, and HTTP/1.1 (by ALPN) through `http1`.
 *
 * Node dispatches streams through its compatibility layer as soon as the server has a 'request'
 * listener, which HTTP/1.1 needs: that dispatcher is its 'stream' listener, removed here, so each
 * stream is served once, by `onStream`. Returns the listener added (the only 'stream' one).
 */
export function serveStreams(
  server: Http2SecureServer,
  http1: (req: IncomingMessage, res: ServerResponse) => void,
  handle: StreamRequestListener,
  socketOf: (session: Http2Session) => Socket | undefined,
): (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void {
  server.on('request', http1);
  server.removeAllListeners('stream');
  const onStream = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    // node's own proxy of the connection's socket is the fallback (one per session).
    const socket = socketOf(stream.session!) ?? (stream.session!.socket as Socket);
    const req = new StreamRequest(stream, headers, socket);
    const res = new StreamResponse(stream);
    // What node's compatibility layer answers itself: CONNECT (405: the gateway tunnels nothing),
    // and an Expect other than 100-continue (417). 100-continue is the handler's to answer, once
    // the request may pass (request-handler.ts), as for HTTP/1.1.
    if (headers[':method'] === 'CONNECT') {
      res.statusCode = 405;
      res.end();
      return;
    }
    if (headers.expect !== undefined && headers.expect !== '100-continue') {
      res.statusCode = 417;
      res.end();
      return;
    }
    handle(req, res);
  };
  server.on('stream', onStream);
  return onStream;
}
