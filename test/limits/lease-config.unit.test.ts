// The `lease` option: validated (fixed windows only, not with a ban or deferred charging),
// compiled per window (a window's own lease wins over its limiter's), carried into the window
// requests, and shown by `tollgate check` and `tollgate explain`.
import { describe, expect, test } from 'vitest';
import { describeRequest, describeRuleTable } from '../../src/cli/describe.js';
import { planWindows } from '../../src/limits/plan.js';
import { loadConfigText } from '../../src/rules/load.js';
import { configErrorOf } from '../helpers/config-errors.js';

const config = (limiters: string) => `
listeners: [{ host: 127.0.0.1, port: 0 }]
upstreams: { app: { url: 'http://127.0.0.1:1' } }
limiters:
${limiters}
routes: [{ name: r, paths: ['/*'], upstream: app, limiters: [hot] }]
`;

describe('lease', () => {
  test('per limiter or per window; true is { max: 1000, spread: 4 }; lease: false turns a window off', () => {
    const table = loadConfigText(
      config(`  hot:
    lease: { max: 50 }
    windows:
      - { limit: 10000000, period: 1h, key: [header:X-Api-Key] }
      - { limit: 100, period: 1m, key: [header:X-Api-Key], lease: false }
      - { limit: 20, period: 1s, key: [header:X-Api-Key], lease: true }
      - { limit: 20, period: 1m, algorithm: sliding, key: [header:X-Api-Key], lease: false }`),
      'c.yaml',
      {},
    );
    const windows = table.limiters.get('hot')!.windows;
    expect(windows.map((w) => w.lease)).toEqual([
      { max: 50, spread: 4 },
      undefined,
      { max: 1000, spread: 4 },
      undefined,
    ]);
    const requests = planWindows(table.routes[0]!.windows, () => 'k', 'tg:');
    expect(requests.map((r) => r.lease)).toEqual([
      { max: 50, spread: 4 },
      undefined,
      { max: 1000, spread: 4 },
      undefined,
    ]);
  });

  test('refused with other algorithms, a ban, chargeAfter or countOnly', () => {
    expect(
      configErrorOf(
        config(`  hot: { windows: [{ limit: 5, period: 1m, algorithm: sliding, lease: true, key: [ip] }] }`),
      ),
    ).toContain('limiters.hot.windows[0].lease: lease applies to algorithm: fixed only');
    expect(
      configErrorOf(
        config(
          `  hot: { lease: true, windows: [{ limit: 5, period: 1m, key: [ip] }, { limit: 5, period: 1h, algorithm: token-bucket, key: [ip] }] }`,
        ),
      ),
    ).toContain(
      'limiters.hot.windows[1].lease: lease applies to algorithm: fixed only: set lease: false on this token-bucket window',
    );
    expect(
      configErrorOf(
        config(
          `  hot: { lease: true, ban: { after: 3, within: 1m, for: 1h }, windows: [{ limit: 5, period: 1m, key: [ip] }] }`,
        ),
      ),
    ).toContain('limiters.hot.lease: lease and ban exclude each other');
    expect(
      configErrorOf(
        config(
          `  hot: { countOnly: [401], windows: [{ limit: 5, period: 1m, key: [ip], lease: { max: 10 } }] }`,
        ),
      ),
    ).toContain(
      'limiters.hot.windows[0].lease: lease needs requests counted at once (not chargeAfter or countOnly)',
    );
    expect(
      configErrorOf(config(`  hot: { lease: { max: 0 }, windows: [{ limit: 5, period: 1m, key: [ip] }] }`)),
    ).toContain('limiters.hot.lease');
  });

  test('tollgate check and explain show it', () => {
    const table = loadConfigText(
      config(
        `  hot: { lease: { max: 200, spread: 2 }, windows: [{ limit: 10000000, period: 1h, key: [ip] }] }`,
      ),
      'c.yaml',
      {},
    );
    expect(describeRuleTable(table)).toContain(
      '  hot: 10000000/1h by ip leased (slices ≤ 200, ≤ 1/(2 × instances) of what remains) (on store error: open)',
    );
    const identity = {
      clientIp: '192.0.2.1',
      raw: new Map([['ip', '192.0.2.1']]),
      hashed: new Map([['ip', 'h']]),
    };
    const text = describeRequest(table, 'r', identity as never, 'tg:');
    expect(text).toContain(
      '  10000000 per 1 hour leased (slices ≤ 200, ≤ 1/(2 × instances) of what remains), key parts:',
    );
  });
});
