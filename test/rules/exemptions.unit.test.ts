// allow, deny and ban in the config: validated, compiled, and shown by `tollgate check` and
// `tollgate explain` (whether this request is exempt or denied, and its ban key).
import ipaddr from 'ipaddr.js';
import { describe, expect, test } from 'vitest';
import { describeRequest, describeRuleTable } from '../../src/cli/describe.js';
import { planWindows } from '../../src/limits/plan.js';
import { loadConfigText } from '../../src/rules/load.js';

const config = (limiter: string) => `
listeners: [{ host: 127.0.0.1, port: 0 }]
upstreams: { app: { url: 'http://127.0.0.1:1' } }
limiters:
  l:
${limiter}
routes:
  - { name: r, paths: ['/*'], upstream: app, limiters: [l] }
`;

const LISTS = config(`
    windows: [{ limit: 5, period: 1m, key: [ip] }]
    allow: { addresses: ['10.0.0.0/8'], tokens: ['7'] }
    deny: { addresses: ['10.6.6.6', '2001:db8::/32'] }
    ban: { after: 3, within: 10m, for: 1h }`);

describe('allow, deny and ban in the config', () => {
  test('compiled, and a token list has the route verify the workspace token', () => {
    const table = loadConfigText(LISTS, 'c.yaml', {});
    const l = table.limiters.get('l')!;
    expect(l.ban).toEqual({ after: 3, withinMs: 600_000, forMs: 3_600_000 });
    expect(l.allow!.text).toBe('10.0.0.0/8, token 7');
    expect(l.deny!.text).toBe('10.6.6.6, 2001:db8::/32');
    expect(table.routes[0]!.parts).toEqual(new Set(['ip', 'workspace_token']));
    // The ban rides on the limiter's first window, keyed by its hash-tag part, and skips the over-limit cache.
    const [request] = planWindows(table.routes[0]!.windows, () => 'H', 'tg:');
    expect(request).toEqual({
      key: 'tg:{H}:l:60000:ip',
      limit: 5,
      periodMs: 60_000,
      enforce: true,
      cacheWhenSpent: false,
      ban: {
        key: 'tg:{H}:l:ban',
        strikesKey: 'tg:{H}:l:strikes',
        after: 3,
        withinMs: 600_000,
        forMs: 3_600_000,
        span: 1,
      },
    });
  });

  test('a shadow limiter carries no ban to the store', () => {
    const yaml = config(`
    shadow: true
    windows: [{ limit: 5, period: 1m, key: [ip] }]
    ban: { after: 3, within: 10m, for: 1h }`);
    const table = loadConfigText(yaml, 'c.yaml', {});
    expect(planWindows(table.routes[0]!.windows, () => 'H', 'tg:')[0]!.ban).toBeUndefined();
    expect(describeRuleTable(table)).toContain(
      '    ban: after 3 refusals within 10m, for 1h (shadow: never applied)',
    );
  });

  test.each([
    ["allow: { addresses: ['10.0.0.0/33'] }", 'limiters.l.allow.addresses[0]', 'not a CIDR: "10.0.0.0/33"'],
    ["deny: { addresses: ['nope'] }", 'limiters.l.deny.addresses[0]', 'not an IP address or CIDR: "nope"'],
    ['ban: { after: 0, within: 1m, for: 1m }', 'limiters.l.ban.after', ''],
    ['ban: { after: 2, within: 10ms, for: 1m }', 'limiters.l.ban.within', 'within must be at least 1s'],
    ['ban: { after: 2, within: 1m }', 'limiters.l.ban.for', ''],
    ["allow: { ips: ['10.0.0.1'] }", 'limiters.l.allow', 'ips'],
  ])('refused: %s', (line, path, message) => {
    const yaml = config(`    windows: [{ limit: 5, period: 1m, key: [ip] }]\n    ${line}`);
    expect(() => loadConfigText(yaml, 'c.yaml', {})).toThrow(path);
    if (message) expect(() => loadConfigText(yaml, 'c.yaml', {})).toThrow(message);
  });

  test('tollgate check shows the lists and the ban', () => {
    const text = describeRuleTable(loadConfigText(LISTS, 'c.yaml', {}));
    expect(text).toContain(
      [
        '  l: 5/1m by ip (on store error: open)',
        '    message: Too Many Attempts.',
        '    allow: 10.0.0.0/8, token 7',
        '    deny: 10.6.6.6, 2001:db8::/32',
        '    ban: after 3 refusals within 10m, for 1h',
      ].join('\n'),
    );
  });

  test('tollgate explain says whether this request is exempt or denied, and its ban key', () => {
    const table = loadConfigText(LISTS, 'c.yaml', {});
    const identity = {
      clientIp: '10.6.6.6',
      raw: new Map([['ip', 'ip=10.6.6.6']]),
      hashed: new Map([['ip', 'H']]),
    };
    const explain = (addr: string, token?: string) =>
      describeRequest(table, 'r', identity as never, 'tg:', undefined, {
        address: ipaddr.parse(addr),
        token,
      });
    expect(explain('10.6.6.6')).toContain(
      [
        'limiter l:',
        '  allow: 10.0.0.0/8, token 7',
        '  deny: 10.6.6.6, 2001:db8::/32',
        '  ban: after 3 refusals within 10m, for 1h',
        '  this request: denied (403 denied, not forwarded)',
        '  ban key: tg:{H}:l:ban (lift: DELETE /v1/bans/l/H)',
      ].join('\n'),
    );
    expect(explain('10.1.2.3')).toContain('  this request: exempt (allow list: not counted)');
    expect(explain('192.0.2.1', '7')).toContain('  this request: exempt (allow list: not counted)');
    expect(explain('192.0.2.1')).not.toContain('this request:');
  });
});
