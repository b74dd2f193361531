// The HTTP/2 prototype of the h2 scenarios: bare forwarding over TLS (no limiting), to size what
// node's HTTP/2 layers cost against each other, with the same certificate and h2load as tollgate.
// H2_MODE=compat: http2's compatibility layer (request/response objects, as tollgate used to);
// H2_MODE=core: the core API (the session's 'stream' event, stream.respond + write/end);
// H2_MODE=h1: HTTP/1.1 over TLS (node:https), the comparison's denominator.
// Each mode reads the small body whole, then forwards it with undici's Pool.dispatch into the
// response, as tollgate does.
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { constants, createSecureServer } from 'node:http2';
import { endToEnd, exitOnSigterm, Relay, ResponseRelay, upstreamPool } from './forwarding.js';

const mode = process.env.H2_MODE ?? 'core';
const port = Number(process.env.PORT);
const pool = upstreamPool();
const tls = { cert: readFileSync(process.env.TLS_CERT), key: readFileSync(process.env.TLS_KEY) };

/** Reads a readable (a request, or an h2 stream's readable side) whole; null when it has no body. */
function readWhole(readable, hasBody, then) {
  if (!hasBody) return then(null);
  const chunks = [];
  readable.on('data', (c) => chunks.push(c));
  readable.once('end', () => then(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
}

const declaresBody = (headers, endAfterHeaders) =>
  headers['content-length'] !== undefined ? headers['content-length'] !== '0' : !endAfterHeaders;

/** HTTP/1.1 and the compatibility layer: a (req, res) pair. */
function onRequest(req, res) {
  const h2 = req.httpVersionMajor === 2;
  readWhole(req, declaresBody(req.headers, h2 && req.stream.endAfterHeaders), (body) => {
    const headers = endToEnd(req.headers);
    if (body) headers['content-length'] = String(body.length);
    pool.dispatch({ path: req.url, method: req.method, headers, body }, new ResponseRelay(res));
  });
}

/** A relay into one ServerHttp2Stream of the core API: respond + write/end. */
class StreamRelay extends Relay {
  finished = false;

  constructor(stream) {
    super();
    this.stream = stream;
    stream.once('close', () => this.finished || this.abort());
  }

  start(status, headers) {
    headers[':status'] = status;
    this.stream.respond(headers);
  }

  write(chunk) {
    return this.stream.write(chunk);
  }

  onDrain(resume) {
    this.stream.once('drain', resume);
  }

  end() {
    this.finished = true;
    this.stream.end();
  }

  // A stream the client already closed (h2load ending a run) has nothing left to answer.
  fail() {
    const stream = this.stream;
    if (stream.closed || stream.destroyed) return;
    if (stream.headersSent) stream.close(constants.NGHTTP2_INTERNAL_ERROR);
    else stream.respond({ ':status': 502 }, { endStream: true });
  }
}

/** The core API: one ServerHttp2Stream, answered with respond + write/end. */
function onStream(stream, h2headers) {
  readWhole(stream, declaresBody(h2headers, stream.endAfterHeaders), (body) => {
    const headers = endToEnd(h2headers);
    headers.host = h2headers[':authority'];
    if (body) headers['content-length'] = String(body.length);
    const target = { path: h2headers[':path'], method: h2headers[':method'], headers, body };
    pool.dispatch(target, new StreamRelay(stream));
  });
}

let server;
if (mode === 'h1') server = createHttpsServer(tls, onRequest);
else if (mode === 'compat') server = createSecureServer({ ...tls, allowHTTP1: true }, onRequest);
else if (mode === 'core') {
  server = createSecureServer({ ...tls, allowHTTP1: true });
  // HTTP/1.1 (by ALPN) needs a 'request' listener; adding one makes node dispatch every h2 stream
  // through the compatibility layer too, with a 'stream' listener of its own: that one is removed.
  server.on('request', onRequest);
  server.removeAllListeners('stream');
  server.on('stream', onStream);
} else throw new Error(`H2_MODE must be compat, core or h1, got "${mode}"`);
server.listen(port, '127.0.0.1');
exitOnSigterm(server, pool);
