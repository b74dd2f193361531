// onStoreError: local in the config: validated, compiled (limiter and store.onError default), and
// shown by `tollgate check` and `tollgate explain`.
import { describe, expect, test } from 'vitest';
import { describeRequest, describeRuleTable } from '../../src/cli/describe.js';
import { localPlan } from '../../src/http/local-plan.js';
import { loadConfigText } from '../../src/rules/load.js';

const config = (onError: string, limiters: string) => `
listeners: [{ host: 127.0.0.1, port: 0 }]
store: { onError: ${onError} }
upstreams: { app: { url: 'http://127.0.0.1:1' } }
limiters:
${limiters}
routes: [{ name: r, paths: ['/*'], upstream: app, limiters: [a, b] }]
`;

const MIXED = config(
  'open',
  `  a: { onStoreError: local, windows: [{ limit: 10, period: 1m, key: [ip] }] }
  b: { windows: [{ limit: 5, period: 1h, key: [ip] }] }`,
);

describe('onStoreError: local', () => {
  test('compiled per limiter, store.onError the default; the route counts the local windows only', () => {
    const table = loadConfigText(MIXED, 'c.yaml', {});
    expect([...table.limiters.values()].map((l) => [l.name, l.onStoreError])).toEqual([
      ['a', 'local'],
      ['b', 'open'],
    ]);
    const plan = localPlan(table.routes[0]!)!;
    expect(plan.indexes).toEqual([0]);
    expect(plan.limiters.map((l) => l.name)).toEqual(['a']);
    expect(plan.open.map((l) => l.name)).toEqual(['b']);
    expect(localPlan(table.routes[0]!)).toBe(plan); // made once per compiled route

    const all = loadConfigText(
      config(
        'local',
        `  a: { windows: [{ limit: 10, period: 1m, key: [ip] }] }
  b: { onStoreError: closed, windows: [{ limit: 5, period: 1h, key: [ip] }] }`,
      ),
      'c.yaml',
      {},
    );
    expect([...all.limiters.values()].map((l) => l.onStoreError)).toEqual(['local', 'closed']);
    expect(all.routes[0]!.failsClosed).toBe(true);
    const none = loadConfigText(
      config(
        'open',
        `  a: { windows: [{ limit: 10, period: 1m, key: [ip] }] }
  b: { onStoreError: closed, windows: [{ limit: 5, period: 1h, key: [ip] }] }`,
      ),
      'c.yaml',
      {},
    );
    expect(localPlan(none.routes[0]!)).toBeUndefined();
  });

  test('an unknown policy is refused, naming the field and the choices', () => {
    expect(() =>
      loadConfigText(
        config(
          'open',
          `  a: { onStoreError: nearby, windows: [{ limit: 1, period: 1m, key: [ip] }] }
  b: { windows: [{ limit: 1, period: 1m, key: [ip] }] }`,
        ),
        'c.yaml',
        {},
      ),
    ).toThrow(
      'c.yaml:6:22: limiters.a.onStoreError: unknown value "nearby"; expected one of open, closed, local',
    );
  });

  test('tollgate check and explain show it', () => {
    const table = loadConfigText(MIXED, 'c.yaml', {});
    const check = describeRuleTable(table);
    expect(check).toContain('  a: 10/1m by ip (on store error: local (limit ÷ live instances))');
    expect(check).toContain('  b: 5/1h by ip (on store error: open)');
    const text = describeRequest(
      table,
      'r',
      { clientIp: '1.2.3.4', raw: new Map([['ip', 'ip=1.2.3.4']]), hashed: new Map([['ip', 'H']]) } as never,
      'tg:',
    );
    expect(text.split('\n').slice(2)).toEqual([
      'limiter a:',
      '  10 per 1 minute, key parts:',
      '    ip = ip=1.2.3.4 -> H',
      '    store key: tg:{H}:a:60000:ip',
      '    pk (IETF RateLimit): :N6L0l/gMQiw5GaSV:',
      '  store lost: counted in this process at floor(limit ÷ live instances), at least 1',
      'limiter b:',
      '  5 per 1 hour, key parts:',
      '    ip = ip=1.2.3.4 -> H',
      '    store key: tg:{H}:b:3600000:ip',
      '    pk (IETF RateLimit): :xGoevHXr1ecFDQ1f:',
    ]);
  });
});
