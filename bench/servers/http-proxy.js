// Bare forwarding with http-proxy 1.18, over a keep-alive agent (without one, http-proxy opens a
// new upstream connection per request, which would measure TCP setup rather than the proxy).
import { Agent, createServer } from 'node:http';
import httpProxy from 'http-proxy';

const port = Number(process.env.PORT);
const agent = new Agent({ keepAlive: true, maxSockets: 128 });
const proxy = httpProxy.createProxyServer({ target: process.env.UPSTREAM_URL, agent });
proxy.on('error', (err, _req, res) => {
  if (res.headersSent) res.destroy(err);
  else {
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(String(err.message));
  }
});

const server = createServer((req, res) => proxy.web(req, res));
server.listen(port, '127.0.0.1');
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => {
    agent.destroy();
    process.exit(0);
  });
});
