// What `npm run bench` measures. Every scenario is one server under test in its own process (or
// process tree), loaded with POSTs of a small JSON body that the bench upstream answers 200.
//
// kind: 'script' (a bench server), 'tollgate' (dist/cli.js with bench/gateway.yaml).
// admin: a script that runs tollgate too gets ADMIN_PORT (and `decisions` can be checked).
// redis: the server gets REDIS_URL (and the report counts Redis commands per response).
// expect: the status every response should have. limit: the X-RateLimit-Limit the probe must see.
// config: the tollgate config (default bench/gateway.yaml); loadgen: { h1 } runs h2load over TLS
// (bench/gateway-tls.yaml, a certificate made for the run) instead of wrk.
// counterPrefix: Redis keys holding the limiter's counters (their growth is compared with responses).
// decisions: the tollgate limiter whose decisions (admin /metrics) are compared with responses.

export const HUGE_LIMIT = '1000000000';

/** The baseline of every ratio: what forwarding costs with nothing else in the request path. */
export const BASELINE = 'undici-stream';

export const SCENARIOS = [
  {
    id: 'undici-stream',
    label: 'bare undici forwarding (Pool.stream): the baseline',
    kind: 'script',
    script: 'bench/servers/undici-proxy.js',
    env: { UNDICI_MODE: 'stream' },
    path: '/bench/forward',
    expect: 200,
  },
  {
    id: 'undici',
    label: 'bare undici forwarding (Pool.dispatch, the technique tollgate uses)',
    kind: 'script',
    script: 'bench/servers/undici-proxy.js',
    env: { UNDICI_MODE: 'dispatch' },
    path: '/bench/forward',
    expect: 200,
  },
  {
    id: 'direct',
    label: 'the upstream itself (node:http answering, no forwarding)',
    kind: 'script',
    script: 'bench/servers/upstream.js',
    path: '/bench/forward',
    expect: 200,
  },
  {
    id: 'http-proxy',
    label: 'bare http-proxy 1.18 forwarding (keep-alive agent)',
    kind: 'script',
    script: 'bench/servers/http-proxy.js',
    path: '/bench/forward',
    expect: 200,
  },
  {
    id: 'tollgate-memory',
    label: 'tollgate, memory store, one IP limiter',
    kind: 'tollgate',
    path: '/bench/forward',
    expect: 200,
    limit: HUGE_LIMIT,
    decisions: 'bench-forward',
  },
  {
    id: 'tollgate-redis',
    label: 'tollgate, Redis store, one IP limiter',
    kind: 'tollgate',
    redis: true,
    path: '/bench/forward',
    expect: 200,
    limit: HUGE_LIMIT,
    counterPrefix: 'tg:',
    decisions: 'bench-forward',
  },
  {
    id: 'tollgate-tier',
    label: 'tollgate, Redis store, one IP limiter with tiers, the tier from an override (CIDR)',
    kind: 'tollgate',
    redis: true,
    config: 'bench/gateway-tiers.yaml',
    path: '/bench/forward',
    expect: 200,
    limit: HUGE_LIMIT,
    counterPrefix: 'tg:',
    decisions: 'bench-tier',
  },
  {
    id: 'tollgate-redis-w2',
    label: 'tollgate, Redis store, workers: 2',
    kind: 'tollgate',
    redis: true,
    env: { WORKERS: '2' },
    path: '/bench/forward',
    expect: 200,
    limit: HUGE_LIMIT,
    counterPrefix: 'tg:',
    decisions: 'bench-forward',
    workers: 2,
  },
  {
    id: 'tollgate-post-charge',
    label: 'tollgate, Redis store, chargeAfter: checked, then charged X-Cost after the response',
    kind: 'tollgate',
    redis: true,
    path: '/bench/post-charge',
    expect: 200,
    limit: HUGE_LIMIT,
    decisions: 'bench-post-charge',
  },
  {
    id: 'tollgate-sliding',
    label: 'tollgate, Redis store, one IP limiter as a sliding window',
    kind: 'tollgate',
    redis: true,
    path: '/bench/sliding',
    expect: 200,
    limit: HUGE_LIMIT,
    decisions: 'bench-sliding',
  },
  {
    id: 'tollgate-token-bucket',
    label: 'tollgate, Redis store, one IP limiter as a token bucket',
    kind: 'tollgate',
    redis: true,
    path: '/bench/token-bucket',
    expect: 200,
    limit: HUGE_LIMIT,
    decisions: 'bench-token-bucket',
  },
  {
    id: 'tollgate-calendar',
    label: 'tollgate, Redis store, one IP limiter on a calendar day',
    kind: 'tollgate',
    redis: true,
    path: '/bench/calendar',
    expect: 200,
    limit: HUGE_LIMIT,
    decisions: 'bench-calendar',
  },
  {
    id: 'tollgate-429',
    label: 'tollgate, 429 for a flooding key (Redis, over-limit cache)',
    kind: 'tollgate',
    redis: true,
    path: '/bench/flood',
    expect: 429,
    limit: '1',
    decisions: 'bench-flood',
  },
  {
    id: 'tollgate-429-sliding',
    label: 'tollgate, 429 for a flooding key, sliding window (Redis, over-limit cache)',
    kind: 'tollgate',
    redis: true,
    path: '/bench/flood-sliding',
    expect: 429,
    limit: '1',
    decisions: 'bench-flood-sliding',
  },
  {
    id: 'tollgate-429-token-bucket',
    label: 'tollgate, 429 for a flooding key, token bucket (Redis, over-limit cache)',
    kind: 'tollgate',
    redis: true,
    path: '/bench/flood-token-bucket',
    expect: 429,
    limit: '1',
    decisions: 'bench-flood-token-bucket',
  },
  {
    id: 'tollgate-429-nocache',
    label: 'tollgate, 429 for a flooding key (Redis, overLimitCache: false)',
    kind: 'tollgate',
    redis: true,
    path: '/bench/flood-nocache',
    expect: 429,
    limit: '1',
    decisions: 'bench-flood-nocache',
  },
  {
    id: 'rlf',
    label: 'rate-limiter-flexible (Redis) + http-proxy: the Node peer',
    kind: 'script',
    script: 'bench/servers/rlf-http-proxy.js',
    redis: true,
    path: '/bench/forward',
    expect: 200,
    limit: HUGE_LIMIT,
    counterPrefix: 'rlf:',
  },
  {
    id: 'express',
    label: 'express 5 + express-rate-limit + rate-limit-redis + http-proxy-middleware',
    kind: 'script',
    script: 'bench/servers/express-peer.js',
    redis: true,
    path: '/bench/forward',
    expect: 200,
    limit: HUGE_LIMIT,
    counterPrefix: 'rl:',
  },
  {
    id: 'tollgate-tls-h1',
    label: 'tollgate over TLS, HTTP/1.1 (h2load --h1), memory store, one IP limiter',
    kind: 'tollgate',
    config: 'bench/gateway-tls.yaml',
    loadgen: { h1: true },
    requires: 'h2load',
    path: '/bench/forward',
    expect: 200,
    decisions: 'bench-forward',
  },
  {
    id: 'tollgate-h2',
    label: 'tollgate over TLS, HTTP/2 (h2load, one stream per connection), memory store, one IP limiter',
    kind: 'tollgate',
    config: 'bench/gateway-tls.yaml',
    loadgen: { h1: false },
    requires: 'h2load',
    path: '/bench/forward',
    expect: 200,
    decisions: 'bench-forward',
  },
  {
    id: 'nginx',
    label: 'nginx proxy_pass (Debian nginx, 1 worker, no limiting)',
    kind: 'script',
    script: 'bench/servers/nginx.js',
    requires: 'nginx',
    path: '/bench/forward',
    expect: 200,
  },
  {
    id: 'nginx-auth-memory',
    label: 'nginx + tollgate forward-auth (auth_request, memory store; both on the one CPU)',
    kind: 'script',
    script: 'bench/servers/nginx-forward-auth.js',
    requires: 'nginx',
    admin: true,
    path: '/bench/forward',
    expect: 200,
    limit: HUGE_LIMIT,
    decisions: 'bench-forward',
  },
  {
    id: 'nginx-auth-redis',
    label: 'nginx + tollgate forward-auth (auth_request, Redis store; both on the one CPU)',
    kind: 'script',
    script: 'bench/servers/nginx-forward-auth.js',
    requires: 'nginx',
    admin: true,
    redis: true,
    path: '/bench/forward',
    expect: 200,
    limit: HUGE_LIMIT,
    counterPrefix: 'tg:',
    decisions: 'bench-forward',
  },
  {
    id: 'tollgate-lease',
    label: 'tollgate, Redis store, one hot key of 10,000,000/h, leased (slices ≤ 1000)',
    kind: 'tollgate',
    redis: true,
    config: 'bench/gateway-lease.yaml',
    path: '/bench/forward',
    expect: 200,
    limit: '10000000',
    decisions: 'bench-lease',
  },
];

/**
 * The ratios (req/s vs bare undici Pool.stream, pinned) in the performance issue that asked for
 * this bench, measured before any of its work: the report shows this run's beside them.
 */
export const ISSUE_BASELINE = new Map([
  ['undici-stream', 1.0],
  ['tollgate-memory', 0.62],
  ['tollgate-redis', 0.43],
  ['rlf', 0.44],
  ['tollgate-429', 1.21],
]);

/** Profiled by default, in one extra run each after the measured rounds. */
export const DEFAULT_PROFILED = ['tollgate-memory', 'tollgate-redis'];

/**
 * The issue's targets: ratios in the same run, as req/s (the issue's terms) and as CPU per request
 * (base CPU µs/req ÷ this one's, the req/s ratio a saturated CPU would give).
 */
export const TARGETS = [
  {
    name: 'tollgate memory store ≥ 0.90× bare undici forwarding',
    of: 'tollgate-memory',
    over: BASELINE,
    min: 0.9,
  },
  {
    name: 'tollgate Redis store ≥ 0.80× bare undici forwarding',
    of: 'tollgate-redis',
    over: BASELINE,
    min: 0.8,
  },
  {
    name: 'tollgate + Redis ≥ 2× rate-limiter-flexible + http-proxy',
    of: 'tollgate-redis',
    over: 'rlf',
    min: 2,
  },
  {
    name: '429 path ≥ 3× tollgate + Redis forwarded throughput',
    of: 'tollgate-429',
    over: 'tollgate-redis',
    min: 3,
  },
  {
    name: '429 path, sliding window ≥ 3× tollgate + Redis forwarded throughput',
    of: 'tollgate-429-sliding',
    over: 'tollgate-redis',
    min: 3,
  },
  {
    name: '429 path, token bucket ≥ 3× tollgate + Redis forwarded throughput',
    of: 'tollgate-429-token-bucket',
    over: 'tollgate-redis',
    min: 3,
  },
  // Ratios printed for information, with no target.
  // Issue 21: each algorithm and policy costs at most 5 % more CPU per request than a fixed window.
  {
    name: 'sliding window / fixed window (Redis)',
    of: 'tollgate-sliding',
    over: 'tollgate-redis',
    min: 0.95,
  },
  {
    name: 'token bucket / fixed window (Redis)',
    of: 'tollgate-token-bucket',
    over: 'tollgate-redis',
    min: 0.95,
  },
  { name: 'calendar day / fixed window (Redis)', of: 'tollgate-calendar', over: 'tollgate-redis', min: 0.95 },
  {
    name: 'tier from an override / no tiers (Redis)',
    of: 'tollgate-tier',
    over: 'tollgate-redis',
    min: 0.95,
  },
  {
    name: 'post-charge / fixed window (Redis)',
    of: 'tollgate-post-charge',
    over: 'tollgate-redis',
    min: 0.95,
  },
  { name: '429 path with / without the over-limit cache', of: 'tollgate-429', over: 'tollgate-429-nocache' },
  { name: 'tollgate + Redis, workers: 2 / one process', of: 'tollgate-redis-w2', over: 'tollgate-redis' },
  { name: 'tollgate + Redis / the express stack', of: 'tollgate-redis', over: 'express' },
  { name: 'tollgate memory store / nginx proxy_pass', of: 'tollgate-memory', over: 'nginx' },
  { name: 'nginx + tollgate forward-auth / nginx alone', of: 'nginx-auth-memory', over: 'nginx' },
  {
    name: 'nginx + tollgate forward-auth / tollgate as the proxy (memory store)',
    of: 'nginx-auth-memory',
    over: 'tollgate-memory',
  },
  {
    name: 'nginx + tollgate forward-auth / tollgate as the proxy (Redis)',
    of: 'nginx-auth-redis',
    over: 'tollgate-redis',
  },
  { name: 'HTTP/2 / HTTP/1.1, both over TLS (h2load)', of: 'tollgate-h2', over: 'tollgate-tls-h1' },
  { name: 'HTTP/2 over TLS (h2load) / plain HTTP/1.1 (wrk)', of: 'tollgate-h2', over: 'tollgate-memory' },
];

// Redis Cluster (issue 23): a 3-master cluster the bench starts (redisCluster: the server gets
// REDIS_CLUSTER_NODES, and the report gives each master's script calls and Redis CPU per response).
SCENARIOS.push(
  {
    id: 'tollgate-cluster',
    label: 'tollgate, Redis Cluster (3 masters), one IP limiter: one slot',
    kind: 'tollgate',
    redisCluster: true,
    config: 'bench/gateway-cluster.yaml',
    path: '/bench/forward',
    expect: 200,
    limit: HUGE_LIMIT,
    decisions: 'bench-forward',
  },
  {
    id: 'tollgate-cluster-spread',
    label: 'tollgate, Redis Cluster (3 masters), three limiters on three hash tags (ip, Host, Content-Type)',
    kind: 'tollgate',
    redisCluster: true,
    config: 'bench/gateway-cluster.yaml',
    path: '/bench/spread',
    expect: 200,
    decisions: 'bench-spread-ip', // (no limit: the probe reads no X-RateLimit-Limit on this route)
  },
);
