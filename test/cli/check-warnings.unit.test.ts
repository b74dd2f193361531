// `tollgate check`'s warnings (unused limiters, unreachable routes, contradicting windows) and its
// summary of each listener, from rule tables loaded as the command loads them.
import { describe, expect, test } from 'vitest';
import { checkWarnings, routeCovers } from '../../src/cli/check-warnings.js';
import { describeRuleTable } from '../../src/cli/describe.js';
import { loadConfigText } from '../../src/rules/load.js';

const table = (limiters: string, routes: string, extra = '') =>
  loadConfigText(
    `listeners: [{ port: 0 }]
upstreams:
  app: { url: "http://127.0.0.1:9" }
${extra}
limiters:
${limiters}
routes:
${routes}
`,
    'conf.yaml',
    {},
  );

const route = (spec: string) => table('  x: { windows: [{ limit: 1, period: 1m, key: [ip] }] }', spec).routes;

describe('checkWarnings', () => {
  test('an unused limiter, an unreachable route and contradicting windows, one line each', () => {
    const t = table(
      `  l:
    windows:
      - { limit: 100, period: 1m, key: [ip] }
      - { limit: 50, period: 1h, key: [ip] }
  old-api: { windows: [{ limit: 5, period: 1m, key: [ip] }] }`,
      `  - { name: api, paths: ['/api/*'], upstream: app, limiters: [l] }
  - { name: v1, methods: [GET], paths: ['/api/v1/*', '/API/v2'], upstream: app }`,
    );
    expect(checkWarnings(t)).toEqual([
      'limiter "old-api" is unused: no route names it',
      'route "v1" is unreachable: route "api" before it matches all its requests',
      'windows contradict: l.0 (100/1m by ip) can never refuse, l.1 (50/1h by ip) is spent first',
    ]);
  });

  test('nothing for the shipped shapes: sane windows, routes in the right order, every limiter used', () => {
    const t = table(
      `  a:
    windows:
      - { limit: 1000, period: 1m, key: [ip, user_agent] }
      - { limit: 30000, period: 1h, key: [ip] }
  b: { windows: [{ limit: 10, period: 1m, key: [ip] }, { limit: 10, period: 1h, key: [ip], algorithm: token-bucket }] }
  c: { shadow: true, windows: [{ limit: 1, period: 1h, key: [ip] }] }`,
      `  - { name: other-host, hosts: [x.test], paths: ['/api/*'], upstream: app }
  - { name: v1, paths: ['/api/v1/*'], upstream: app, limiters: [a, c] }
  - { name: api, paths: ['/api/*'], upstream: app, limiters: [b] }`,
    );
    expect(checkWarnings(t)).toEqual([]);
  });

  test('a longer window keyed by fewer parts counts more: it contradicts; by other parts it does not', () => {
    // Across limiters of one route too: the windows of a request are all checked.
    const t = table(
      `  l:
    windows:
      - { limit: 100, period: 1m, key: [ip, user_agent] }
      - { limit: 100, period: 1h, key: [ip] }
  m:
    windows:
      - { limit: 100, period: 1m, key: [ip] }
      - { limit: 10, period: 1h, key: [user_agent] }`,
      `  - { name: r1, paths: ['/1/*'], upstream: app, limiters: [l] }
  - { name: r2, paths: ['/2/*'], upstream: app, limiters: [m] }`,
    );
    expect(checkWarnings(t)).toEqual([
      'windows contradict: l.0 (100/1m by ip+user_agent) can never refuse, l.1 (100/1h by ip) is spent first',
    ]);
  });

  test('a descriptor-only limiter is used when the rate-limit service runs, unused otherwise', () => {
    const limiters = `  d: { descriptors: [{ domain: edge, entries: [{ key: k }] }], windows: [{ limit: 5, period: 1m }] }`;
    const routes = `  - { name: r, paths: ['/*'], upstream: app }`;
    expect(checkWarnings(table(limiters, routes))).toEqual([
      'limiter "d" is unused: no route names it, and its descriptors need rateLimitService',
    ]);
    expect(checkWarnings(table(limiters, routes, 'rateLimitService: { port: 0 }'))).toEqual([]);
  });
});

describe('routeCovers', () => {
  test.each([
    [`{ paths: ['/*'] }`, `{ paths: ['/a'] }`, true],
    [`{ paths: ['/a'] }`, `{ paths: ['/A/'] }`, true],
    [`{ paths: ['/a'] }`, `{ paths: ['/a*'] }`, false],
    [`{ paths: ['/a/*'] }`, `{ paths: ['/a*'] }`, false],
    [`{ paths: ['/a*', '/b'] }`, `{ paths: ['/ab/*', '/b'] }`, true],
    [`{ methods: [GET], paths: ['/*'] }`, `{ paths: ['/x'] }`, false],
    [`{ methods: [GET, POST], paths: ['/*'] }`, `{ methods: [post], paths: ['/x'] }`, true],
    [
      `{ hosts: ['*.example.com'], paths: ['/*'] }`,
      `{ hosts: [a.example.com, '*.b.example.com'], paths: ['/x'] }`,
      true,
    ],
    [`{ hosts: ['*.example.com'], paths: ['/*'] }`, `{ hosts: [example.com], paths: ['/x'] }`, false],
    [`{ hosts: [a.test], paths: ['/*'] }`, `{ paths: ['/x'] }`, false],
  ])('%s before %s: %s', (earlier, later, covers) => {
    const [a, b] = route(
      `  - { name: a, upstream: app, ${earlier.slice(2, -2)} }\n  - { name: b, upstream: app, ${later.slice(2, -2)} }`,
    );
    expect(routeCovers(a!, b!)).toBe(covers);
  });
});

describe("check's listener summary", () => {
  test('mode, onLimited, TLS, HTTP/2, mTLS and the IETF headers of each listener', () => {
    const t = loadConfigText(
      `listeners:
  - { port: 0 }
  - { name: tls, port: 0, ietfHeaders: true, tls: { cert: c.pem, key: k.pem } }
  - { name: mtls, port: 0, tls: { cert: c.pem, key: k.pem, ca: ca.pem, minVersion: TLSv1.3 }, http2: { enabled: false } }
  - { name: auth, host: 127.0.0.1, port: 0, mode: decision, onLimited: 403 }
upstreams:
  app: { url: "http://127.0.0.1:9" }
routes: [{ name: all, paths: ["/*"], upstream: app }]
`,
      'conf.yaml',
      {},
    );
    expect(describeRuleTable(t).split('\n').slice(0, 5)).toEqual([
      'listeners:',
      '  public: 0.0.0.0:0, mode proxy, onLimited 429, TLS off, HTTP/2 off (needs TLS), mTLS off',
      '  tls: 0.0.0.0:0, mode proxy, onLimited 429, TLS (TLSv1.2+), HTTP/2 on, mTLS off, IETF headers',
      '  mtls: 0.0.0.0:0, mode proxy, onLimited 429, TLS (TLSv1.3+), HTTP/2 off, mTLS (ca.pem)',
      '  auth: 127.0.0.1:0, mode decision, onLimited 403, TLS off, HTTP/2 off (needs TLS), mTLS off',
    ]);
  });
});

test('windows of two limiters on one route contradict too', () => {
  const t = table(
    `  a: { windows: [{ limit: 100, period: 1m, key: [ip, user_agent] }] }
  b: { windows: [{ limit: 10, period: 1h, key: [user_agent] }] }`,
    `  - { name: r, paths: ['/*'], upstream: app, limiters: [a, b] }`,
  );
  expect(checkWarnings(t)).toEqual([
    'windows contradict: a.0 (100/1m by ip+user_agent) can never refuse, b.0 (10/1h by user_agent) is spent first',
  ]);
});
