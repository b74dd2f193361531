// Bare forwarding with undici: a Pool and pool.stream, the technique of src/proxy/upstream.ts,
// without limiting, request ids or X-Forwarded-* headers.
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

const server = createServer((req, res) => {
  const length = req.headers['content-length'];
  const hasBody = length !== undefined ? length !== '0' : req.headers['transfer-encoding'] !== undefined;
  pool
    .stream(
      { path: req.url, method: req.method, headers: endToEnd(req.headers), body: hasBody ? req : null },
      ({ statusCode, headers }) => {
        res.writeHead(statusCode, endToEnd(headers));
        return res;
      },
    )
    .catch((err) => {
      if (res.headersSent) res.destroy(err);
      else {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(String(err.message));
      }
    });
});
server.listen(port, '127.0.0.1');
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => pool.close().then(() => process.exit(0)));
});
