// Bare forwarding with undici, without limiting, request ids or X-Forwarded-* headers.
// UNDICI_MODE=dispatch: pool.dispatch with a handler writing straight into the response, the
// technique of src/proxy/response-relay.ts. UNDICI_MODE=stream: pool.stream into the response.
import { createServer } from 'node:http';
import { endToEnd, exitOnSigterm, failResponse, ResponseRelay, upstreamPool } from './forwarding.js';

const port = Number(process.env.PORT);
const pool = upstreamPool();

function viaStream(req, res, options) {
  pool
    .stream(options, ({ statusCode, headers }) => {
      res.writeHead(statusCode, endToEnd(headers));
      return res;
    })
    .catch((err) => failResponse(res, err));
}

function viaDispatch(req, res, options) {
  pool.dispatch(options, new ResponseRelay(res));
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
exitOnSigterm(server, pool);
