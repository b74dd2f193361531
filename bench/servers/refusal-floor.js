// The floor of the 429 path: a bare node:http server answering every request with the bytes
// tollgate's over-limit 429 has (the same status, headers in the same order, the same body), and
// nothing else: no routing, no key, no store, no metrics, no log. What tollgate spends per 429
// above this server's instructions is its own; what this server spends, no gateway on node:http
// can avoid. Each response gets a fresh X-Request-Id (as tollgate makes one per request) and the
// window's X-RateLimit-Reset and Retry-After of a fixed window of PERIOD_SEC (default 1 h),
// formatted per request. The body is read by nobody, as tollgate leaves a refused one unread.
// Like the bench's flood routes (a limit of 1), the first POST is answered 200 (the bench's probe
// checks that), every later one 429; anything else (the bench's readiness GET /healthz) 200.
// SPIN_US=N: each 429 first spins N µs of user time (bench/closed-loop.js: a slower floor).
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

const port = Number(process.env.PORT);
const periodMs = Number(process.env.PERIOD_SEC ?? 3600) * 1000;
const BODY = JSON.stringify({ error: { code: 'rate_limited', message: 'Too Many Attempts.' } });
const LENGTH = String(Buffer.byteLength(BODY));
// FLOOR_ENCODING=latin1: the same bytes (the body is ASCII) written without UTF-8 encoding.
const ENCODING = process.env.FLOOR_ENCODING ?? 'utf8';

const spinMs = Number(process.env.SPIN_US ?? 0) / 1000;

let first = true;

const server = createServer((req, res) => {
  if (first || req.method !== 'POST') {
    if (req.method === 'POST') first = false;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' });
    res.end('{}');
    return;
  }
  if (spinMs > 0) for (const end = performance.now() + spinMs; performance.now() < end;);
  const now = Date.now();
  const resetAtMs = Math.ceil((now + 1) / periodMs) * periodMs;
  res.writeHead(429, {
    'x-request-id': randomUUID(),
    'x-ratelimit-limit': '1',
    'x-ratelimit-remaining': '0',
    'x-ratelimit-reset': String(Math.ceil(resetAtMs / 1000)),
    'retry-after': String(Math.max(1, Math.ceil((resetAtMs - now) / 1000))),
    'content-type': 'application/json',
    'content-length': LENGTH,
  });
  res.end(BODY, ENCODING);
});
server.listen(port, '127.0.0.1');
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
