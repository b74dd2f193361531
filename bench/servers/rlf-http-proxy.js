// The peer a Node user would pick instead of tollgate: rate-limiter-flexible's RateLimiterRedis
// (ioredis, one key per client IP, a limit that never trips) in front of http-proxy 1.18 over a
// keep-alive agent, on plain node:http. Same limit and headers as tollgate's forwarding route, and
// the same advantages: ioredis auto-pipelining and kept-alive upstream connections.
import { Agent, createServer } from 'node:http';
import httpProxy from 'http-proxy';
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';

const POINTS = 1e9;
const DURATION_SEC = 3600;
const port = Number(process.env.PORT);
const redis = new Redis(process.env.REDIS_URL, { enableAutoPipelining: true });
const limiter = new RateLimiterRedis({
  storeClient: redis,
  keyPrefix: 'rlf',
  points: POINTS,
  duration: DURATION_SEC,
});
const agent = new Agent({ keepAlive: true, maxSockets: 128 });
const proxy = httpProxy.createProxyServer({ target: process.env.UPSTREAM_URL, agent });

const fail = (res, status, message) => {
  if (res.headersSent) return res.destroy();
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { code: status === 429 ? 'rate_limited' : 'bad_gateway', message } }));
};
proxy.on('error', (err, _req, res) => fail(res, 502, err.message));

function rateHeaders(res, r) {
  res.setHeader('X-RateLimit-Limit', String(POINTS));
  res.setHeader('X-RateLimit-Remaining', String(r.remainingPoints));
  res.setHeader('X-RateLimit-Reset', String(Math.ceil(r.msBeforeNext / 1000)));
}

const server = createServer((req, res) => {
  limiter.consume(req.socket.remoteAddress ?? 'unknown', 1).then(
    (r) => {
      rateHeaders(res, r);
      proxy.web(req, res);
    },
    (r) => {
      // Rejected with a RateLimiterRes when over the limit, with an Error when Redis failed.
      if (r instanceof Error) return fail(res, 503, r.message);
      rateHeaders(res, r);
      res.setHeader('Retry-After', String(Math.ceil(r.msBeforeNext / 1000)));
      fail(res, 429, 'too many requests');
    },
  );
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1');
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => {
    agent.destroy();
    redis.quit().finally(() => process.exit(0));
  });
});
