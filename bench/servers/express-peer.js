// The peer stack: express 5 + express-rate-limit + rate-limit-redis (ioredis) + http-proxy-middleware,
// with the same limit as tollgate's forwarding route (1e9 an hour, keyed by client IP).
// Given the same advantages tollgate has: a keep-alive upstream agent and ioredis auto-pipelining.
import { Agent } from 'node:http';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { Redis } from 'ioredis';
import { RedisStore } from 'rate-limit-redis';

const port = Number(process.env.PORT);
const redis = new Redis(process.env.REDIS_URL, { enableAutoPipelining: true });
const agent = new Agent({ keepAlive: true, maxSockets: 128 });

const app = express();
const limiter = rateLimit({
  windowMs: 60 * 60 * 1000,
  limit: 1e9,
  standardHeaders: false,
  legacyHeaders: true, // X-RateLimit-Limit/-Remaining/-Reset, as tollgate sends
  store: new RedisStore({ prefix: 'rl:', sendCommand: (command, ...args) => redis.call(command, ...args) }),
});
const proxy = createProxyMiddleware({ target: process.env.UPSTREAM_URL, agent });
app.post('/bench/forward', limiter, proxy);

const server = app.listen(port, '127.0.0.1');
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => {
    agent.destroy();
    redis.quit().finally(() => process.exit(0));
  });
});
