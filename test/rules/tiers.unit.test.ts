// Tiers in the config: validated, compiled into window variants that share the window's store key,
// chosen per request (override, JWT claim, plan, default), and shown by check and explain.
import { describe, expect, test } from 'vitest';
import { describeRequest, describeRuleTable } from '../../src/cli/describe.js';
import { planWindows } from '../../src/limits/plan.js';
import { chooseTier, DEFAULT_TIER, windowsFor } from '../../src/limits/tier-choice.js';
import type { ConfigError } from '../../src/config/errors.js';
import { loadConfigText } from '../../src/rules/load.js';

const config = (extra = '') => `
listeners: [{ host: 127.0.0.1, port: 0 }]
upstreams: { app: { url: 'http://127.0.0.1:1' } }
${extra}
limiters:
  api:
    windows:
      - { limit: 10, period: 1m, key: [ip], tiers: { free: { limit: 5 }, pro: { limit: 100 } } }
      - { limit: 20, period: 1s, algorithm: token-bucket, burst: 40, key: [ip], tiers: { pro: { limit: 50, burst: 200 } } }
  plain: { windows: [{ limit: 3, period: 1h, key: [ip] }] }
routes:
  - { name: r, paths: ['/*'], upstream: app, limiters: [api, plain] }
`;

const route = () => loadConfigText(config(), 'c.yaml', {}).routes[0]!;
const limits = (ws: readonly { window: { limit: number; burst: number } }[]) =>
  ws.map((w) => [w.window.limit, w.window.burst]);

describe('compiled tiers', () => {
  test('each window at each tier; an unknown tier or none: the window’s own limit, never unlimited', () => {
    const r = route();
    expect(r.tiered).toBe(true);
    const at = (tier: string | undefined) =>
      limits(windowsFor(r.windows, chooseTier(undefined, tier, undefined)));
    expect(at(undefined)).toEqual([
      [10, 10],
      [20, 40],
      [3, 3],
    ]);
    expect(at('free')).toEqual([
      [5, 5],
      [20, 40],
      [3, 3],
    ]);
    expect(at('pro')).toEqual([
      [100, 100],
      [50, 200],
      [3, 3],
    ]);
    expect(at('gold')).toEqual([
      [10, 10],
      [20, 40],
      [3, 3],
    ]);
    expect(windowsFor(r.windows, DEFAULT_TIER)).toBe(r.windows);
  });

  test('a tier keeps the store keys: only the limit changes', () => {
    const r = route();
    const keys = (ws: Parameters<typeof planWindows>[0]) =>
      planWindows(ws, () => 'h', 'tg:').map((q) => q.key);
    const pro = windowsFor(r.windows, chooseTier(undefined, 'pro', undefined));
    expect(keys(pro)).toEqual(keys(r.windows));
    expect(planWindows(pro, () => 'h', 'tg:').map((q) => [q.limit, q.rate])).toEqual([
      [100, undefined],
      [200, 50],
      [3, undefined],
    ]);
  });

  test('overrides: a tier, unlimited (no window counted) or a custom limit on every window', () => {
    const r = route();
    const o = (action: object) =>
      chooseTier({ key: 'ip:1.2.3.4/32', action: action as never }, 'free', 'pro');
    expect(limits(windowsFor(r.windows, o({ tier: 'pro' })))).toEqual([
      [100, 100],
      [50, 200],
      [3, 3],
    ]);
    expect(windowsFor(r.windows, o({ unlimited: true }))).toEqual([]);
    expect(limits(windowsFor(r.windows, o({ limit: 7 })))).toEqual([
      [7, 7],
      [7, 7],
      [7, 7],
    ]);
    expect(limits(windowsFor(r.windows, o({ limit: 7, burst: 9 })))).toEqual([
      [7, 7],
      [7, 9],
      [7, 7],
    ]);
  });

  test('precedence: override, then the JWT claim, then the plan, then the default', () => {
    const match = { key: 'token:t', action: { tier: 'x' } };
    expect(chooseTier(match, 'a', 'b')).toEqual({ tier: 'x', source: 'override', override: match });
    expect(chooseTier(undefined, 'a', 'b')).toEqual({ tier: 'a', source: 'jwt', override: undefined });
    expect(chooseTier(undefined, undefined, 'b')).toEqual({ tier: 'b', source: 'plan', override: undefined });
    expect(chooseTier(undefined, undefined, undefined)).toBe(DEFAULT_TIER);
  });
});

describe('validation', () => {
  const issues = (text: string) => {
    try {
      loadConfigText(text, 'c.yaml', {});
      return [];
    } catch (err) {
      return [(err as ConfigError).message];
    }
  };

  test('burst in a tier of a fixed window, and a tier JWT with nothing to verify it with', () => {
    const bad = config().replace('free: { limit: 5 }', 'free: { limit: 5, burst: 9 }');
    expect(issues(bad).join('\n')).toContain(
      'limiters.api.windows[0].tiers.free.burst: burst applies to algorithm: token-bucket only',
    );
    expect(issues(config('tiers: { jwt: { claim: plan } }')).join('\n')).toContain(
      'tiers.jwt: set jwksUrl, jwksFile, publicKeys or secret, or configure identity.jwt (the visitor JWT) to read',
    );
    expect(issues(config("tiers: { jwt: { jwksUrl: 'nope' } }")).join('\n')).toContain(
      'tiers.jwt.jwksUrl: not a URL: "nope"',
    );
  });
});

test('tollgate check shows the tiers and their sources', () => {
  const table = loadConfigText(
    config(
      "tiers: { jwt: { claim: plan, jwksUrl: 'https://idp.example/jwks.json' }, workspaceTokenPlan: true }",
    ),
    'c.yaml',
    {},
  );
  const text = describeRuleTable(table);
  expect(text).toContain(
    'tiers: override, then claim "plan" of the bearer JWT (verified with JWKS https://idp.example/jwks.json), ' +
      "then the workspace token's plan, then default; overrides: admin API (store, polled every 1s)",
  );
  expect(text).toContain(
    '  api: 10/1m by ip [tiers: free 5, pro 100], 20/1s token-bucket (burst 40) by ip [tiers: pro 50 (burst 200)] (on store error: open)',
  );
  expect(
    describeRuleTable(loadConfigText(config().replace(/, tiers: \{[^\n]*\} \}/g, ' }'), 'c.yaml', {})),
  ).not.toContain('tiers');
});

test('tollgate explain shows the tier and the limits at it', () => {
  const table = loadConfigText(config(), 'c.yaml', {});
  const r = table.routes[0]!;
  const identity = {
    clientIp: '1.2.3.4',
    jwt: undefined,
    workspaceToken: undefined,
    raw: new Map([['ip', 'ip=1.2.3.4']]),
    hashed: new Map([['ip', 'h']]),
  };
  const unlimited = chooseTier({ key: 'ip:1.2.3.4/32', action: { unlimited: true } }, undefined, undefined);
  const text = describeRequest(table, 'r', identity, 'tg:', undefined, undefined, {
    choice: unlimited,
    windows: windowsFor(r.windows, unlimited),
  });
  expect(text).toContain('tier: unlimited (override ip:1.2.3.4/32)');
  expect(text).toContain('  10 per 1 minute: not counted (unlimited)');
  const pro = chooseTier(undefined, 'pro', undefined);
  const proText = describeRequest(table, 'r', identity, 'tg:', undefined, undefined, {
    choice: pro,
    windows: windowsFor(r.windows, pro),
  });
  expect(proText).toContain('tier: pro (from the JWT claim)');
  expect(proText).toContain('  100 per 1 minute, key parts:');
  expect(proText).toContain('  50 per 1 second token-bucket (burst 200), key parts:');
});
