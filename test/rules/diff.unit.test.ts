// The reload log's diff: limiters and routes added, removed and changed, with the old and new limits.
import { describe, expect, test } from 'vitest';
import { diffRules, periodText } from '../../src/rules/diff.js';
import { loadConfigText } from '../../src/rules/load.js';

const config = (limiters: string, routes: string) =>
  loadConfigText(
    `listeners: [{ port: 0 }]
upstreams:
  app: { url: "http://127.0.0.1:9" }
  other: { url: "http://127.0.0.1:10" }
limiters:
${limiters}
routes:
${routes}
`,
    'conf.yaml',
    {},
  );

describe('diffRules', () => {
  test('added, removed and changed limiters and routes, with old and new limits', () => {
    const before = config(
      `  a: { windows: [{ limit: 100, period: 1m, key: [ip] }] }
  gone: { windows: [{ limit: 5, period: 1h, key: [user_agent] }] }
  same: { windows: [{ limit: 1, period: 1s, key: [ip] }] }`,
      `  - { name: api, paths: ['/api/*'], upstream: app, limiters: [a, gone] }
  - { name: old, paths: ['/old'], upstream: app }
  - { name: keep, paths: ['/keep'], upstream: app, limiters: [same] }`,
    );
    const after = config(
      `  a: { limitedBody: problem, windows: [{ limit: 50, period: 1m, key: [ip] }, { limit: 900, period: 1h, key: [ip], algorithm: sliding }] }
  new: { windows: [{ limit: 10, period: 90s, key: ['header:X-Key'], algorithm: token-bucket, burst: 20 }] }
  same: { windows: [{ limit: 1, period: 1s, key: [ip] }] }`,
      `  - { name: api, methods: [GET], paths: ['/api/*'], upstream: other, limiters: [a] }
  - { name: fresh, hosts: [x.test], paths: ['/f'], upstream: app, limiters: [new] }
  - { name: keep, paths: ['/keep'], upstream: app, limiters: [same] }`,
    );
    expect(diffRules(before, after)).toEqual({
      limiters: {
        added: ['new'],
        removed: ['gone'],
        changed: [
          {
            name: 'a',
            from: '100/1m by ip (on store error: open); message: Too Many Attempts.',
            to: '50/1m by ip, 900/1h sliding by ip (on store error: open, problem+json); message: Too Many Attempts.',
          },
        ],
      },
      routes: {
        added: ['fresh'],
        removed: ['old'],
        changed: [
          {
            name: 'api',
            from: '* /api/* -> app [limiters: a, gone]',
            to: 'GET /api/* -> other [limiters: a]',
          },
        ],
      },
    });
  });

  test('the same config twice: nothing', () => {
    const text = (n: number) =>
      config(
        `  a: { windows: [{ limit: ${n}, period: 1m, key: [ip] }] }`,
        `  - { name: r, paths: ['/*'], upstream: app, limiters: [a] }`,
      );
    const empty = { added: [], removed: [], changed: [] };
    expect(diffRules(text(1), text(1))).toEqual({ limiters: empty, routes: empty });
    // A limit changed under a route: the limiter changed, the route (which names it) did not.
    expect(diffRules(text(1), text(2))).toEqual({
      limiters: {
        ...empty,
        changed: [
          {
            name: 'a',
            from: '1/1m by ip (on store error: open); message: Too Many Attempts.',
            to: '2/1m by ip (on store error: open); message: Too Many Attempts.',
          },
        ],
      },
      routes: empty,
    });
  });

  test('periods as written', () => {
    expect([1000, 90_000, 3_600_000, 86_400_000, 1500].map(periodText)).toEqual([
      '1s',
      '90s',
      '1h',
      '1d',
      '1500ms',
    ]);
  });
});
