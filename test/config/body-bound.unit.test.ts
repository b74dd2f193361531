import { describe, expect, test } from 'vitest';
import { loadConfigText } from '../../src/rules/load.js';
import { bulkSyncBodyLimit } from '../../src/cli/services-config.js';
import { configErrorOf } from '../helpers/config-errors.js';
import { DEFAULT_CONFIG } from '../helpers/default-config.js';

/** Each route's compiled bound, by name. */
function bounds(yaml: string, env: Record<string, string> = {}): Record<string, number> {
  const table = loadConfigText(yaml, 'test.yaml', env);
  return Object.fromEntries(table.routes.map((r) => [r.name, r.maxBodySize]));
}

const config = (requests: string, services = '') => `
listeners: [{ port: 0 }]
${requests}
${services}
upstreams:
  remote: { url: 'http://127.0.0.1:9' }
  here: { embedded: websites }
  there: { url: 'http://127.0.0.1:9', embedded: websites }
routes:
  - { name: remote, paths: [/r], upstream: remote }
  - { name: remote-own, paths: [/ro], upstream: remote, maxBodySize: 2mb }
  - { name: remote-unbounded, paths: [/ru], upstream: remote, maxBodySize: 0 }
  - { name: here, paths: [/h], upstream: here }
  - { name: here-own, paths: [/ho], upstream: here, maxBodySize: 64kb }
  - { name: here-unbounded, paths: [/hu], upstream: here, maxBodySize: 0 }
  - { name: here-looser, paths: [/hl], upstream: here, maxBodySize: 50mb }
  - { name: there-looser, paths: [/tl], upstream: there, maxBodySize: 50mb }
`;

const MB = 1024 * 1024;

describe('the body bound of a route', () => {
  test('unset everywhere: services.maxBodySize (5mb), for every route; embedded ones never looser', () => {
    expect(bounds(config(''))).toEqual({
      remote: 5 * MB,
      'remote-own': 2 * MB,
      'remote-unbounded': 0,
      here: 5 * MB,
      'here-own': 64 * 1024,
      'here-unbounded': 5 * MB,
      'here-looser': 5 * MB,
      // An embedded service behind a url runs elsewhere, with a bound this config does not know.
      'there-looser': 50 * MB,
    });
  });

  test('requests.maxBodySize is the default of routes that set none; services.maxBodySize bounds the embedded', () => {
    expect(bounds(config('requests: { maxBodySize: 20mb }', 'services: { maxBodySize: 1mb }'))).toMatchObject(
      {
        remote: 20 * MB,
        'remote-own': 2 * MB,
        here: 1 * MB,
        'here-own': 64 * 1024,
        'here-unbounded': 1 * MB,
      },
    );
    expect(bounds(config('requests: { maxBodySize: 0 }'))).toMatchObject({ remote: 0, here: 5 * MB });
  });

  test('the shipped config: every route bound at 5mb, MAX_BODY_SIZE moves them all', () => {
    expect(new Set(Object.values(bounds(DEFAULT_CONFIG)))).toEqual(new Set([5 * MB]));
    expect(new Set(Object.values(bounds(DEFAULT_CONFIG, { MAX_BODY_SIZE: '1kb' })))).toEqual(new Set([1024]));
  });

  test('the bulk-sync handshake announces the bound the gateway applies', () => {
    const { config: shipped } = loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', {});
    expect(bulkSyncBodyLimit(shipped)).toBe(5 * MB);
  });

  test('the defaults and checks of the requests and streams blocks', () => {
    const { config: loaded } = loadConfigText(config(''), 'test.yaml', {});
    expect(loaded.requests).toEqual({
      bodyTimeout: 10_000,
      responseTimeout: 30_000,
      responseBuffer: { perResponse: 256 * 1024, total: 64 * 1024 * 1024 },
      maxInFlightPerIp: 64,
      shedAfter: 500,
    });
    expect(loaded.streams).toEqual({ maxPerSession: 3, maxPerIp: 128 });
    expect(loaded.upstreams['remote']!.streamConnections).toBe(1024);
    expect(loaded.upstreams['remote']!.connectRate).toBe(100);
    expect(loaded.routes[0]!.stream).toBe(false);
    expect(configErrorOf(config('requests: { bodyTimeout: 0 }'))).toContain('must be at least 1ms');
    expect(configErrorOf(config('requests: { responseTimeout: 0 }'))).toContain('must be at least 1ms');
    expect(configErrorOf(config('streams: { maxPerSession: -1 }'))).toContain('streams.maxPerSession');
  });
});
