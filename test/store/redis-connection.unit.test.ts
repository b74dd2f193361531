// The Redis connection settings: cluster seeds with credentials, redacted URLs, TLS options, and
// which connection errors mean the settings are wrong.
import { describe, expect, test } from 'vitest';
import {
  clusterSeeds,
  redactedUrl,
  settingsFault,
  StoreConfigError,
  tlsOptions,
} from '../../src/store/redis-connection.js';
import { describeRuleTable } from '../../src/cli/describe.js';
import { loadConfigText } from '../../src/rules/load.js';
import { configErrorOf } from '../helpers/config-errors.js';

describe('cluster seeds', () => {
  test('host:port seeds: plain, no credentials', () => {
    expect(clusterSeeds(['10.0.0.1:7000', '10.0.0.2'])).toEqual({
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 6379 },
      ],
      username: undefined,
      password: undefined,
      tls: false,
      described: '10.0.0.1:7000,10.0.0.2',
    });
  });

  test('rediss:// seeds with an ACL user: TLS, the user and the (decoded) password for every node', () => {
    const seeds = clusterSeeds(['rediss://app:p%40ss@[::1]:7000', 'rediss://app:p%40ss@h2:7001']);
    expect(seeds).toMatchObject({
      nodes: [
        { host: '::1', port: 7000 },
        { host: 'h2', port: 7001 },
      ],
      username: 'app',
      password: 'p@ss',
      tls: true,
    });
    expect(seeds.described).toBe('rediss://app:***@[::1]:7000,rediss://app:***@h2:7001');
  });

  test('seeds that disagree on the scheme or the credentials are refused', () => {
    expect(() => clusterSeeds(['rediss://a:b@h:1', 'h:2'])).toThrow(StoreConfigError);
    expect(() => clusterSeeds(['rediss://a:b@h:1', 'rediss://a:c@h:2'])).toThrow(
      'store.redis.cluster: every seed must have the same scheme (redis:// or rediss://), user and password',
    );
  });
});

test('redactedUrl keeps the user and hides the password', () => {
  expect(redactedUrl('rediss://app:s3cret@redis:6380/2')).toBe('rediss://app:***@redis:6380/2');
  expect(redactedUrl('redis://:s3cret@redis:6379')).toBe('redis://:***@redis:6379');
  expect(redactedUrl('redis://redis:6379')).toBe('redis://redis:6379');
  expect(redactedUrl('not a url s3cret')).toBe('(unparsable url)');
});

describe('tlsOptions', () => {
  const files: Record<string, string> = { '/ca': 'CA', '/cert': 'CERT', '/key': 'KEY' };
  const read = (file: string) => {
    if (!(file in files)) throw new Error(`ENOENT: no such file, open '${file}'`);
    return Buffer.from(files[file]!);
  };
  const none = { caFile: '', serverName: '', certFile: '', keyFile: '' };

  test('only what is set: Node verifies against the system CAs and the host by default', () => {
    expect(tlsOptions(none, read)).toEqual({});
    expect(
      tlsOptions({ caFile: '/ca', serverName: 'redis.internal', certFile: '/cert', keyFile: '/key' }, read),
    ).toEqual({
      ca: Buffer.from('CA'),
      servername: 'redis.internal',
      cert: Buffer.from('CERT'),
      key: Buffer.from('KEY'),
    });
  });

  test('an unreadable file, or a certificate without its key, is a StoreConfigError naming the field', () => {
    expect(() => tlsOptions({ ...none, caFile: '/missing' }, read)).toThrow(
      "store.redis.tls.caFile: cannot read /missing: ENOENT: no such file, open '/missing'",
    );
    expect(() => tlsOptions({ ...none, certFile: '/cert' }, read)).toThrow(
      'store.redis.tls: certFile and keyFile go together',
    );
  });
});

describe('settingsFault', () => {
  test('a refused login or certificate is a settings fault; a refused or reset connection is not', () => {
    expect(settingsFault(new Error('WRONGPASS invalid username-password pair or user is disabled.'))).toBe(
      'authentication failed (WRONGPASS invalid username-password pair or user is disabled.)',
    );
    expect(settingsFault(new Error('Ready check failed: NOAUTH Authentication required.'))).toMatch(
      /^authentication failed/,
    );
    const cert = Object.assign(new Error("Hostname/IP does not match certificate's altnames"), {
      code: 'ERR_TLS_CERT_ALTNAME_INVALID',
    });
    expect(settingsFault(cert)).toBe(
      "TLS certificate refused (ERR_TLS_CERT_ALTNAME_INVALID: Hostname/IP does not match certificate's altnames)",
    );
    expect(settingsFault(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(
      undefined,
    );
    expect(settingsFault(new Error('Connection is closed.'))).toBe(undefined);
    expect(settingsFault(undefined)).toBe(undefined);
  });

  test('only the message and code are read: the AUTH command ioredis attaches never shows', () => {
    const err = Object.assign(new Error('WRONGPASS invalid username-password pair'), {
      command: { name: 'auth', args: ['app', 'hunter2'] },
    });
    expect(settingsFault(err)).not.toContain('hunter2');
  });
});

test('TLS settings without a rediss:// url are refused when the config loads', () => {
  const yaml = (redis: string) => `listeners: [{ port: 0 }]
store: { redis: ${redis} }
upstreams: { app: { url: "http://127.0.0.1:9" } }
routes: [{ name: all, paths: ["/*"], upstream: app }]
`;
  expect(configErrorOf(yaml("{ url: 'redis://h:6379', tls: { caFile: /ca.pem } }"))).toContain(
    'store.redis.tls: TLS settings need a rediss:// url (or rediss:// cluster seeds)',
  );
  expect(configErrorOf(yaml("{ cluster: 'h:1,h:2', tls: { serverName: x } }"))).toContain(
    'store.redis.tls: TLS settings need a rediss:// url',
  );
});

test('`tollgate check` shows the store and the rate-limit service, passwords redacted', () => {
  const yaml = `listeners: [{ port: 0 }]
rateLimitService: { port: 8081 }
store: { redis: { cluster: 'rediss://app:s3cret@h1:6380,rediss://app:s3cret@h2:6380' } }
upstreams: { app: { url: "http://127.0.0.1:9" } }
limiters:
  per-ip:
    descriptors: [{ domain: edge, entries: [{ key: path, value: /login }, { key: remote_address }] }]
    windows: [{ limit: 5, period: 1m }]
routes: [{ name: all, paths: ["/*"], upstream: app }]
`;
  const text = describeRuleTable(loadConfigText(yaml, 'conf.yaml', {}));
  expect(text.split('\n').slice(0, 8)).toEqual([
    'listeners:',
    '  public: 0.0.0.0:0, mode proxy, onLimited 429, TLS off, HTTP/2 off (needs TLS), mTLS off',
    'rate-limit service (Envoy, gRPC): 127.0.0.1:8081',
    'store: redis cluster (rediss://app:***@h1:6380, rediss://app:***@h2:6380), on error: open',
    '',
    'limiters:',
    '  per-ip: 5/1m (on store error: open)',
    '    message: Too Many Attempts.',
  ]);
  expect(text).toContain('    descriptors: edge [path=/login, remote_address=*]');
  expect(text).not.toContain('s3cret');
});

test('`tollgate check` never shows the password of a url it cannot parse', () => {
  const yaml = `listeners: [{ port: 0 }]
store: { redis: { url: 'redis://:s3cret@h:99999' } }
upstreams: { app: { url: "http://127.0.0.1:9" } }
routes: [{ name: all, paths: ["/*"], upstream: app }]
`;
  const text = describeRuleTable(loadConfigText(yaml, 'conf.yaml', {}));
  expect(text).toContain('store: redis ((unparsable url)), on error: open');
  expect(text).not.toContain('s3cret');
});
