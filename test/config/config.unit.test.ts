import { describe, expect, test } from 'vitest';
import { interpolate } from '../../src/config/interpolate.js';
import { loadConfigText } from '../../src/rules/load.js';
import { configErrorOf } from '../helpers/config-errors.js';
import { DEFAULT_CONFIG } from '../helpers/default-config.js';

const minimal = (extra = '') => `listeners: [{ port: 0 }]
upstreams:
  app: { url: "http://127.0.0.1:9" }
${extra}
routes:
  - name: all
    paths: ["/*"]
    upstream: app
`;

describe('interpolate', () => {
  test('${VAR}, ${VAR:-default} and the $${ escape', () => {
    const env = { A: 'a', EMPTY: '' };
    expect(interpolate('x-${A}-y', env)).toBe('x-a-y');
    expect(interpolate('${B:-fallback}', env)).toBe('fallback');
    expect(interpolate('${EMPTY:-used}', env)).toBe('used');
    expect(interpolate('${EMPTY}', env)).toBe('');
    expect(interpolate('${B:-}', env)).toBe('');
    expect(interpolate('$${A}', env)).toBe('${A}');
    expect(() => interpolate('${MISSING}', env)).toThrow(
      'environment variable MISSING is not set and has no default',
    );
  });
});

describe('loadConfigText', () => {
  test('the shipped config compiles to the limiters of the spec', () => {
    const table = loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', {});
    const summary = Object.fromEntries(
      [...table.limiters.values()].map((l) => [
        l.name,
        l.windows.map((w) => `${w.limit}/${w.periodMs}/${w.parts.join('+')}`),
      ]),
    );
    expect(summary).toEqual({
      'widget-init': ['1000/60000/ip+user_agent', '30000/3600000/ip'],
      'widget-session': ['300/60000/jwt'],
      'widget-leads': ['30/60000/jwt'],
      'wp-plugin': ['60/60000/workspace_token'],
      'widget-typing': ['600/60000/ip'],
      'widget-satisfaction': ['60/60000/ip'],
      'widget-coupon-apply': ['120/60000/ip'],
      'widget-other': ['120/60000/ip'],
      // Storage budgets per address (issue 18), beside the spec's.
      'widget-sessions-ip': ['5000/3600000/ip'],
      'widget-stored-ip': ['300/60000/ip', '3000/3600000/ip'],
      'page-password': ['10/60000/ip', '100/3600000/ip'],
      collector: ['120/60000/ip'],
    });
    expect(table.config.listeners[0]).toEqual({
      name: 'public',
      host: '0.0.0.0',
      port: 8080,
      protocol: 'http',
      // Applies only to a listener with tls (none here).
      http2: { enabled: true, maxConcurrentStreams: 100, maxResetBurst: 200, maxResetsPerSecond: 50 },
      ietfHeaders: false,
      mode: 'proxy',
      onLimited: 429,
    });
    expect(table.config.admin).toEqual({ host: '127.0.0.1', port: 9091 });
    expect(table.config.workers).toBe(1);
    expect(table.config.shadow).toBe(false);
    expect(table.config.reload.watch).toBe(true);
    expect(table.config.store.redis.url).toBe('');
    expect(table.config.identity.trustedProxies).toEqual([]);
  });

  test('environment variables are typed where a plain scalar is one reference', () => {
    const table = loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', {
      PORT: '9090',
      HOST: '127.0.0.1',
      REDIS_URL: 'redis://10.0.0.1:6379',
      TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1',
      LOG_LEVEL: 'debug',
    });
    expect(table.config.listeners[0]).toMatchObject({ host: '127.0.0.1', port: 9090 });
    expect(table.config.store.redis.url).toBe('redis://10.0.0.1:6379');
    expect(table.config.identity.trustedProxies).toEqual(['10.0.0.0/8', '127.0.0.1']);
    expect(table.config.log.level).toBe('debug');
    expect(table.config.store.redis.commandTimeout).toBe(50);
  });

  test.each([
    [
      'an unknown field',
      minimal('extra: 1'),
      // At the key's own line, with the allowed fields.
      'conf.yaml:4:1: extra: unknown field "extra"; allowed: listeners, admin, rateLimitService, workers, shadow, reload, log, shutdown, store, identity, tiers, services, requests, streams, upstreams, limiters, cors, routes',
    ],
    [
      'a bad duration',
      minimal('shutdown: { drainTimeout: soon }'),
      'conf.yaml:4:27: shutdown.drainTimeout: not a duration: "soon"',
    ],
    [
      'an unknown upstream',
      minimal().replace('upstream: app', 'upstream: nowhere'),
      'conf.yaml:8:15: routes[0].upstream: unknown upstream "nowhere"',
    ],
    [
      'an unknown limiter',
      minimal().replace('upstream: app', 'upstream: app\n    limiters: [nope]'),
      'conf.yaml:9:16: routes[0].limiters[0]: unknown limiter "nope"',
    ],
    [
      'a path without a leading slash',
      minimal().replace('"/*"', '"x/*"'),
      'conf.yaml:7:13: routes[0].paths[0]: a path starting with "/"',
    ],
    [
      'a jwt key without identity.jwt',
      minimal('limiters:\n  s: { windows: [{ limit: 1, period: 1m, key: [jwt] }] }').replace(
        'upstream: app\n',
        'upstream: app\n    limiters: [s]\n',
      ),
      'conf.yaml:1:1: identity: route "all" has a limiter keyed by jwt, so identity.jwt must be configured',
    ],
    [
      'alg none',
      minimal('identity: { jwt: { secret: x, algorithms: [none] } }'),
      'identity.jwt.algorithms[0]: "none" is never allowed',
    ],
    [
      'a bad CIDR',
      minimal('identity: { trustedProxies: "10.0.0.0/99" }'),
      'conf.yaml:4:29: identity.trustedProxies[0]: not a CIDR',
    ],
    [
      'a missing variable',
      minimal('log: { level: "${LEVEL}" }'),
      'conf.yaml:4:15: log.level: environment variable LEVEL is not set',
    ],
    [
      'a period under 1s',
      minimal('limiters:\n  s: { windows: [{ limit: 1, period: 10ms, key: [ip] }] }'),
      'limiters.s.windows[0].period: period must be at least 1s',
    ],
    ['a YAML syntax error', 'listeners: [\n  - a: b\n', 'conf.yaml:2:'],
    [
      'a limiter listed twice on a route',
      minimal('limiters:\n  a: { windows: [{ limit: 1, period: 1m, key: [ip] }] }').replace(
        'upstream: app\n',
        'upstream: app\n    limiters: [a, a]\n',
      ),
      'conf.yaml:10:15: routes[0].limiters: limiter "a" is listed twice',
    ],
    [
      'two windows sharing a counter',
      minimal(
        'limiters:\n  a: { windows: [{ limit: 1, period: 1m, key: [ip] }, { limit: 5, period: 60s, key: [ip] }] }',
      ),
      'limiters.a.windows: limiter "a" has two windows with the same period and key',
    ],
    [
      'an unknown log level',
      minimal('log: { level: loud }'),
      'conf.yaml:4:15: log.level: unknown value "loud"; expected one of fatal, error, warn, info, debug, trace, silent',
    ],
    [
      'workers without a shared store',
      minimal('workers: 2'),
      'conf.yaml:4:10: workers: more than one worker needs a shared store (store.redis.url or store.redis.cluster)',
    ],
    ['no routes', 'listeners: [{ port: 0 }]\nupstreams: {}\n', 'conf.yaml:1:1: routes: routes is required'],
  ])('%s is reported with file, line, column and field', (_, yaml, expected) => {
    expect(configErrorOf(yaml)).toContain(expected);
  });

  test('every problem is reported, not just the first', () => {
    const message = configErrorOf(
      minimal('shutdown: { drainTimeout: soon }').replace('port: 0', 'port: 99999'),
    );
    expect(message.split('\n')).toHaveLength(2);
    expect(message).toContain('listeners[0].port');
  });

  test('inline limiters get a name and may not clash', () => {
    const inline = minimal().replace(
      'upstream: app\n',
      'upstream: app\n    limiters: [{ windows: [{ limit: 5, period: 1m, key: [ip] }] }]\n',
    );
    expect([...loadConfigText(inline, 'c', {}).limiters.keys()]).toEqual(['all#0']);
    const clash = minimal('limiters:\n  dup: { windows: [{ limit: 1, period: 1m, key: [ip] }] }').replace(
      'upstream: app\n',
      'upstream: app\n    limiters: [{ name: dup, windows: [{ limit: 5, period: 1m, key: [ip] }] }]\n',
    );
    expect(configErrorOf(clash)).toContain('routes[0].limiters[0].name: duplicate limiter "dup"');
  });
});
