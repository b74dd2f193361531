// Bare forwarding with undici, without limiting, request ids or X-Forwarded-* headers.
// UNDICI_MODE=dispatch: pool.dispatch with a handler writing straight into the response, the
// technique of src/proxy/response-relay.ts. UNDICI_MODE=stream: pool.stream into the response.
import { createServer } from 'node:http';
import { Pool } from 'undici';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEnd(headers) {
  const out = {};
  for (const name in headers) if (!HOP_BY_HOP.has(name) && name !== 'expect') out[name] = headers[name];
  return out;
}

const port = Number(process.env.PORT);
const pool = new Pool(process.env.UPSTREAM_URL, { connections: 128, keepAliveTimeout: 4000 });

const fail = (res, err) => {
  if (res.headersSent) res.destroy(err);
  else {
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(String(err.message));
  }
};

function viaStream(req, res, options) {
  pool
    .stream(options, ({ statusCode, headers }) => {
      res.writeHead(statusCode, endToEnd(headers));
      return res;
    })
    .catch((err) => fail(res, err));
}

function viaDispatch(req, res, options) {
  let controller;
  const onClose = () => {
    if (!res.writableFinished) controller?.abort(new Error('client went away'));
  };
  res.once('close', onClose);
  pool.dispatch(options, {
    onRequestStart(c) {
      controller = c;
    },
    onResponseStart(_c, statusCode, headers) {
      if (statusCode >= 200) res.writeHead(statusCode, endToEnd(headers));
    },
    onResponseData(c, chunk) {
      if (!res.write(chunk)) {
        c.pause();
        res.once('drain', () => c.resume());
      }
    },
    onResponseEnd() {
      res.off('close', onClose);
      res.end();
    },
    onResponseError(_c, err) {
      res.off('close', onClose);
      fail(res, err);
    },
  });
}

const forward = process.env.UNDICI_MODE === 'stream' ? viaStream : viaDispatch;

const server = createServer((req, res) => {
  const length = req.headers['content-length'];
  const hasBody = length !== undefined ? length !== '0' : req.headers['transfer-encoding'] !== undefined;
  forward(req, res, {
    path: req.url,
    method: req.method,
    headers: endToEnd(req.headers),
    body: hasBody ? req : null,
  });
});
server.listen(port, '127.0.0.1');
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => pool.close().then(() => process.exit(0)));
});
