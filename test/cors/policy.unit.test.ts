import { describe, expect, test } from 'vitest';
import { loadConfigText } from '../../src/rules/load.js';
import { allowedOrigin, compileCorsPolicy, judgePreflight, type CorsPolicy } from '../../src/cors/policy.js';
import { canonicalTarget } from '../../src/routing/request-target.js';
import { Router } from '../../src/routing/router.js';
import { configErrorOf } from '../helpers/config-errors.js';
import { DEFAULT_CONFIG } from '../helpers/default-config.js';

/** A config whose one route carries `cors` (YAML flow text), with the named policies of `policies`. */
const withCors = (cors: string, policies = '') => `listeners: [{ port: 0 }]
upstreams:
  app: { url: "http://127.0.0.1:9" }
${policies}
routes:
  - name: all
    paths: ["/*"]
    upstream: app
    cors: ${cors}
`;

const policyOf = (cors: string, policies = '', env: NodeJS.ProcessEnv = {}): CorsPolicy =>
  loadConfigText(withCors(cors, policies), 'c', env).routes[0]!.cors!;

const listed = compileCorsPolicy('listed', {
  origins: ['https://shop.example', 'http://localhost:3000'],
  methods: ['POST', 'DELETE'],
  headers: ['content-type', 'x-widget-token'],
  maxAge: 90_500,
  credentials: true,
});
const any = compileCorsPolicy('any', {
  origins: '*',
  methods: ['GET'],
  headers: [],
  maxAge: 600_000,
  credentials: false,
});

describe('compiling a policy', () => {
  test('header values are built once; maxAge in whole seconds', () => {
    expect(listed).toMatchObject({
      name: 'listed',
      anyOrigin: false,
      credentials: true,
      allowMethods: 'POST, DELETE',
      allowHeaders: 'Content-Type, X-Widget-Token',
      maxAge: '90',
    });
    expect([...listed.origins]).toEqual(['https://shop.example', 'http://localhost:3000']);
    expect(any).toMatchObject({ anyOrigin: true, allowHeaders: '', maxAge: '600' });
  });

  test('the config normalises origins, methods and headers', () => {
    const policy = policyOf(
      '{ origins: ["HTTPS://Shop.Example:443/", "http://127.0.0.1:8080"], methods: [post, Get], headers: [X-Widget-TOKEN, content-type, Content-Type] }',
    );
    expect([...policy.origins]).toEqual(['https://shop.example', 'http://127.0.0.1:8080']);
    expect(policy.allowMethods).toBe('POST, GET');
    expect(policy.allowHeaders).toBe('X-Widget-Token, Content-Type');
  });

  test('defaults: the safelisted methods, no extra headers, 10 minutes, no credentials', () => {
    expect(policyOf("{ origins: '*' }")).toEqual({
      name: 'all',
      anyOrigin: true,
      origins: new Set(),
      credentials: false,
      methods: new Set(['GET', 'HEAD', 'POST']),
      headers: new Set(),
      allowMethods: 'GET, HEAD, POST',
      allowHeaders: '',
      maxAge: '600',
    });
  });

  test('origins from an environment variable: "*" or a comma-separated list', () => {
    const policies = "cors:\n  site: { origins: '${ORIGINS:-*}' }";
    expect(policyOf('site', policies).anyOrigin).toBe(true);
    const fromEnv = policyOf('site', policies, { ORIGINS: ' https://a.example , https://b.example:8443 ' });
    expect([...fromEnv.origins]).toEqual(['https://a.example', 'https://b.example:8443']);
  });

  test('the shipped config opens the widget routes and the analytics collector, and only them, to any origin', () => {
    const table = loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', {});
    const corsRoutes = table.routes.filter((r) => r.cors).map((r) => r.name);
    expect(corsRoutes).toEqual([
      // The owner's inbox page is same-origin HTML: no CORS.
      ...table.routes
        .filter((r) => r.upstream === 'widget' && r.name !== 'widget-inbox-page')
        .map((r) => r.name),
      'analytics-collector',
    ]);
    expect(table.routes.find((r) => r.name === 'analytics-collector')!.cors).toMatchObject({
      name: 'analytics',
      anyOrigin: true,
      credentials: false,
      allowMethods: 'POST',
      allowHeaders: 'Content-Type',
      maxAge: '3600',
    });
    expect(corsRoutes).toContain('widget-leads');
    const widget = table.routes.find((r) => r.name === 'widget-leads')!.cors!;
    expect(widget).toMatchObject({
      name: 'widget',
      anyOrigin: true,
      credentials: false,
      allowMethods: 'GET, POST, DELETE, OPTIONS',
      allowHeaders: 'Content-Type, Authorization, X-Widget-Token, X-Request-Id',
      maxAge: '600',
    });
    // Every widget route shares the one compiled policy; the collector has its own.
    expect(new Set(table.routes.map((r) => r.cors).filter(Boolean)).size).toBe(2);
    const restricted = loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', {
      WIDGET_CORS_ORIGINS: 'https://shop.example,https://www.shop.example',
    });
    expect([...restricted.routes.find((r) => r.name === 'widget-other')!.cors!.origins]).toEqual([
      'https://shop.example',
      'https://www.shop.example',
    ]);
  });

  test.each([
    [
      'a path in an origin',
      "{ origins: ['https://a.example', 'https://shop.example/widget'] }",
      'conf.yaml:9:44: routes[0].cors.origins[1]: not an origin: "https://shop.example/widget" (write scheme://host[:port], e.g. https://shop.example)',
    ],
    ['a bare host', '{ origins: [shop.example] }', 'not an origin: "shop.example"'],
    ['"null"', "{ origins: ['null'] }", 'not an origin: "null"'],
    [
      'a scheme without slashes',
      "{ origins: ['https:shop.example'] }",
      'not an origin: "https:shop.example"',
    ],
    ['another scheme', "{ origins: ['ftp://shop.example'] }", 'not an origin: "ftp://shop.example"'],
    ['a query', "{ origins: ['https://shop.example?x=1'] }", 'not an origin'],
    ['credentials in an origin', "{ origins: ['https://u:p@shop.example'] }", 'not an origin'],
    [
      '"*" among origins',
      "{ origins: ['*', 'https://shop.example'] }",
      'routes[0].cors.origins: "*" already allows every origin: list no others with it',
    ],
    ['no origins', "{ origins: '' }", 'routes[0].cors.origins: name at least one origin, or "*"'],
    ['a bad maxAge', "{ origins: '*', maxAge: soon }", 'routes[0].cors.maxAge: not a duration: "soon"'],
    [
      'credentials with any origin',
      "{ origins: '*', credentials: true }",
      'routes[0].cors.credentials: credentials need a list of origins',
    ],
    ['a maxAge over a day', "{ origins: '*', maxAge: 25h }", 'routes[0].cors.maxAge: at most 24h'],
    [
      'a method that is no token',
      "{ origins: '*', methods: ['GET POST'] }",
      'routes[0].cors.methods[0]: a method name',
    ],
    [
      'a header that is no token',
      "{ origins: '*', headers: ['x:y'] }",
      'routes[0].cors.headers[0]: a header name',
    ],
    [
      'an unknown field',
      "{ origins: '*', exposeAll: true }",
      'routes[0].cors.exposeAll: unknown field "exposeAll"; allowed: origins, methods, headers, maxAge, credentials',
    ],
    ['a policy of the wrong type', '5', 'routes[0].cors: Invalid input'],
  ])('%s is refused', (_, cors, expected) => {
    expect(configErrorOf(withCors(cors))).toContain(expected);
  });

  test('an unknown policy name is reported at the route', () => {
    expect(configErrorOf(withCors('widgte', "cors:\n  widget: { origins: '*' }"))).toContain(
      'conf.yaml:10:11: routes[0].cors: unknown CORS policy "widgte"',
    );
  });
});

describe('allowedOrigin', () => {
  test('a listed origin is echoed only when it matches exactly', () => {
    expect(allowedOrigin(listed, 'https://shop.example')).toBe('https://shop.example');
    expect(allowedOrigin(listed, 'http://localhost:3000')).toBe('http://localhost:3000');
    for (const origin of [
      'https://shop.example.evil.test',
      'https://evil.test.shop.example',
      'https://evilshop.example',
      'http://shop.example',
      'https://shop.example:443',
      'https://SHOP.example',
      'https://shop.example/',
      'http://localhost:30000',
      'null',
      '',
      // Node joins repeated Origin headers.
      'https://evil.test, https://shop.example',
    ]) {
      expect(allowedOrigin(listed, origin), origin).toBeUndefined();
    }
    expect(allowedOrigin(listed, undefined)).toBeUndefined();
  });

  test('"*" is answered with "*", never with the origin, and not to a request without one', () => {
    expect(allowedOrigin(any, 'https://anyone.example')).toBe('*');
    expect(allowedOrigin(any, 'null')).toBe('*');
    expect(allowedOrigin(any, undefined)).toBeUndefined();
  });
});

describe('judgePreflight', () => {
  test('an allowed origin, method and headers', () => {
    expect(judgePreflight(listed, 'https://shop.example', 'POST', 'content-type,x-widget-token')).toEqual({
      allowed: true,
      allowOrigin: 'https://shop.example',
    });
    // Header names are case-insensitive; spaces and empty entries are ignored.
    expect(
      judgePreflight(listed, 'https://shop.example', 'DELETE', ' Content-Type ,, X-WIDGET-TOKEN ,'),
    ).toEqual({ allowed: true, allowOrigin: 'https://shop.example' });
    expect(judgePreflight(listed, 'https://shop.example', 'POST', undefined)).toMatchObject({
      allowed: true,
    });
    expect(judgePreflight(any, 'https://x.example', 'GET', '')).toEqual({ allowed: true, allowOrigin: '*' });
  });

  test('each refusal names what was refused', () => {
    expect(judgePreflight(listed, 'https://evil.test', 'POST', undefined)).toEqual({
      allowed: false,
      code: 'cors_origin_not_allowed',
      message: 'This origin may not call this API.',
    });
    // Methods are case-sensitive, as the Fetch standard leaves non-standard spellings alone.
    for (const method of ['PUT', 'post', 'GET']) {
      expect(judgePreflight(listed, 'https://shop.example', method, undefined), method).toEqual({
        allowed: false,
        code: 'cors_method_not_allowed',
        message: 'This method is not allowed in cross-origin requests.',
      });
    }
    expect(judgePreflight(listed, 'https://shop.example', 'POST', 'content-type,authorization')).toEqual({
      allowed: false,
      code: 'cors_header_not_allowed',
      message: 'A requested header is not allowed in cross-origin requests.',
    });
  });
});

describe('Router.matchPreflight', () => {
  const router = new Router([
    { name: 'init', hosts: ['*'], methods: ['POST'], paths: ['/w/init'], cors: 'widget' },
    { name: 'erase', hosts: ['*'], methods: ['DELETE'], paths: ['/w/me'], cors: 'widget' },
    { name: 'admin', hosts: ['*'], methods: ['POST'], paths: ['/w/admin'] },
    { name: 'widget', hosts: ['*'], methods: ['*'], paths: ['/w/*'], cors: 'widget' },
    { name: 'site', hosts: ['*'], methods: ['*'], paths: ['/*'] },
  ]);
  const preflight = (method: string, url: string) =>
    router.matchPreflight('h', method, canonicalTarget(url).matchPath)?.name;

  test('finds the route the real request will take', () => {
    expect(preflight('POST', '/w/init')).toBe('init');
    expect(preflight('POST', '/w/%69nit?x=1')).toBe('init');
    expect(preflight('DELETE', '/w/me')).toBe('erase');
    expect(preflight('GET', '/w/init')).toBe('widget');
    expect(preflight('PUT', '/w/anything')).toBe('widget');
  });

  test('nothing when that route has no CORS: the OPTIONS request is routed as usual', () => {
    expect(preflight('POST', '/w/admin')).toBeUndefined();
    expect(preflight('POST', '/elsewhere')).toBeUndefined();
    expect(router.match('h', 'OPTIONS', '/w/admin')?.name).toBe('widget');
  });
});
