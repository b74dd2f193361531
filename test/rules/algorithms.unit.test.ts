// A window's algorithm in the config: validated, compiled into the model and the store key, and
// shown by `tollgate check` and `tollgate explain`.
import { describe, expect, test } from 'vitest';
import { describeRequest, describeRuleTable } from '../../src/cli/describe.js';
import { windowRequest } from '../../src/limits/keys.js';
import { loadConfigText } from '../../src/rules/load.js';

const config = (windows: string) => `
listeners: [{ host: 127.0.0.1, port: 0 }]
upstreams: { app: { url: 'http://127.0.0.1:1' } }
limiters:
  l:
    windows:
${windows}
routes: [{ name: r, paths: ['/*'], upstream: app, limiters: [l] }]
`;

const MIXED = config(`
      - { limit: 5, period: 1m, key: [ip] }
      - { limit: 100, period: 1h, algorithm: sliding, key: [ip] }
      - { limit: 10, period: 1s, algorithm: token-bucket, burst: 30, key: [ip] }
      - { limit: 7, period: 1m, algorithm: token-bucket, key: [ip] }`);

describe('algorithm per window', () => {
  test('compiled: the algorithm, the burst (unset: the limit), and the algorithm in the store key', () => {
    const l = loadConfigText(MIXED, 'c.yaml', {}).limiters.get('l')!;
    expect(l.windows.map((w) => [w.algorithm, w.limit, w.burst, w.keyStem])).toEqual([
      ['fixed', 5, 5, ':l:60000:ip'],
      ['sliding', 100, 100, ':l:3600000.sliding:ip'],
      ['token-bucket', 10, 30, ':l:1000.token-bucket:ip'],
      ['token-bucket', 7, 7, ':l:60000.token-bucket:ip'],
    ]);
    // What the store is asked: a fixed window exactly as before; a bucket's limit is its burst.
    expect(l.windows.map((w) => windowRequest(l, w, 'k'))).toEqual([
      { key: 'k', limit: 5, periodMs: 60_000, enforce: true, cacheWhenSpent: true },
      {
        key: 'k',
        limit: 100,
        periodMs: 3_600_000,
        enforce: true,
        cacheWhenSpent: true,
        algorithm: 'sliding',
      },
      {
        key: 'k',
        limit: 30,
        periodMs: 1000,
        enforce: true,
        cacheWhenSpent: true,
        algorithm: 'token-bucket',
        rate: 10,
      },
      {
        key: 'k',
        limit: 7,
        periodMs: 60_000,
        enforce: true,
        cacheWhenSpent: true,
        algorithm: 'token-bucket',
        rate: 7,
      },
    ]);
  });

  test('tollgate check and explain show it', () => {
    const table = loadConfigText(MIXED, 'c.yaml', {});
    expect(describeRuleTable(table)).toContain(
      '  l: 5/1m by ip, 100/1h sliding by ip, 10/1s token-bucket (burst 30) by ip, 7/1m token-bucket (burst 7) by ip (on store error: open)',
    );
    const hashed = new Map([['ip', 'H']]);
    const text = describeRequest(
      table,
      'r',
      { clientIp: '1.2.3.4', raw: new Map([['ip', 'ip=1.2.3.4']]), hashed } as never,
      'tg:',
    );
    expect(text).toContain('  100 per 1 hour sliding, key parts:');
    expect(text).toContain('    store key: tg:{H}:l:3600000.sliding:ip');
    expect(text).toContain('  10 per 1 second token-bucket (burst 30), key parts:');
  });

  test('two windows of one period and key may differ by algorithm; the same algorithm twice is refused', () => {
    expect(() =>
      loadConfigText(
        config(`
      - { limit: 5, period: 1m, key: [ip] }
      - { limit: 5, period: 1m, algorithm: sliding, key: [ip] }`),
        'c.yaml',
        {},
      ),
    ).not.toThrow();
    expect(() =>
      loadConfigText(
        config(`
      - { limit: 5, period: 1m, algorithm: sliding, key: [ip] }
      - { limit: 6, period: 1m, algorithm: sliding, key: [ip] }`),
        'c.yaml',
        {},
      ),
    ).toThrow('has two windows with the same period and key');
  });

  test.each([
    [
      '{ limit: 5, period: 1m, algorithm: sliding, burst: 3, key: [ip] }',
      'burst applies to algorithm: token-bucket only',
    ],
    ['{ limit: 5, period: 1m, burst: 3, key: [ip] }', 'burst applies to algorithm: token-bucket only'],
    ['{ limit: 5, period: 1m, algorithm: leaky, key: [ip] }', 'algorithm'],
    ['{ limit: 200000000, period: 365d, algorithm: sliding, key: [ip] }', 'must stay below 2^53'],
    [
      '{ limit: 1, period: 365d, algorithm: token-bucket, burst: 900000000, key: [ip] }',
      'must stay below 2^53',
    ],
  ])('refused: %s', (window, message) => {
    expect(() => loadConfigText(config(`      - ${window}`), 'c.yaml', {})).toThrow(message);
  });
});
