// What the bare forwarders (undici-proxy.js, h2-proto.js) share: the upstream pool, tollgate's own
// end-to-end header copy (from dist/, so the bench needs `npm run build` as for every tollgate
// scenario), and undici dispatch handlers that relay the upstream's answer into a response.
import { Pool } from 'undici';
import { endToEnd as copyEndToEnd } from '../../dist/proxy/headers.js';

/** The pool to the bench upstream (UPSTREAM_URL). */
export const upstreamPool = () =>
  new Pool(process.env.UPSTREAM_URL, { connections: 128, keepAliveTimeout: 4000 });

/** Answered here, never forwarded: Expect, and HTTP/2's pseudo-headers (":path", …). */
const notForwarded = (name) => name === 'expect' || name.charCodeAt(0) === 58;

/** The headers that cross the proxy: hop-by-hop ones and those above dropped. */
export const endToEnd = (headers) => copyEndToEnd(headers, notForwarded);

/** 502 when nothing was sent yet; else the response is cut. */
export function failResponse(res, err) {
  if (res.headersSent) res.destroy(err);
  else {
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(String(err.message));
  }
}

/**
 * A dispatch handler writing the upstream's answer into a sink through `start(status, headers)`,
 * `write`, `onDrain`, `end` and `fail`, pausing the upstream while the client is behind.
 */
export class Relay {
  controller = undefined;

  onRequestStart(c) {
    this.controller = c;
  }

  onResponseStart(_c, statusCode, headers) {
    if (statusCode >= 200) this.start(statusCode, endToEnd(headers));
  }

  onResponseData(c, chunk) {
    if (!this.write(chunk)) {
      c.pause();
      this.onDrain(() => c.resume());
    }
  }

  onResponseEnd() {
    this.end();
  }

  onResponseError(_c, err) {
    this.fail(err);
  }

  /** The client went away before the answer ended: the upstream request is dropped. */
  abort() {
    this.controller?.abort(new Error('client went away'));
  }
}

/** A relay into a (req, res) response: HTTP/1.1, or HTTP/2's compatibility layer. */
export class ResponseRelay extends Relay {
  constructor(res) {
    super();
    this.res = res;
    res.once('close', () => res.writableFinished || this.abort());
  }

  start(status, headers) {
    this.res.writeHead(status, headers);
  }

  write(chunk) {
    return this.res.write(chunk);
  }

  onDrain(resume) {
    this.res.once('drain', resume);
  }

  end() {
    this.res.end();
  }

  fail(err) {
    failResponse(this.res, err);
  }
}

/** On SIGTERM: stop listening, close the pool, exit (at the latest after half a second). */
export function exitOnSigterm(server, pool) {
  process.once('SIGTERM', () => {
    server.closeAllConnections?.();
    server.close(() => pool.close().then(() => process.exit(0)));
    setTimeout(() => process.exit(0), 500).unref();
  });
}
