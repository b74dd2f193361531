// store.redis.batchWindow and batchesInFlight in the config: validated, defaulted, and shown by `tollgate check`.
import { describe, expect, test } from 'vitest';
import { describeRuleTable } from '../../src/cli/describe.js';
import { retirementGraceMs } from '../../src/runtime/pool-retirement.js';
import { loadConfigText } from '../../src/rules/load.js';

const config = (redis: string) => `
listeners: [{ host: 127.0.0.1, port: 0 }]
store: { redis: { ${redis} } }
upstreams: { app: { url: 'http://127.0.0.1:1' } }
routes: [{ name: r, paths: ['/*'], upstream: app }]
`;

describe('store.redis.batchWindow', () => {
  test('defaults to 0 (the end of the turn); the summary says nothing of it then', () => {
    const table = loadConfigText(config("url: 'redis://127.0.0.1:6379'"), 'c.yaml', {});
    expect(table.config.store.redis.batchWindow).toBe(0);
    expect(describeRuleTable(table)).toContain('store: redis (redis://127.0.0.1:6379), on error: open\n');
  });

  test("a window is shown, and it lengthens a retired pool's grace", () => {
    const table = loadConfigText(
      config("url: 'redis://127.0.0.1:6379', batchWindow: 2ms, commandTimeout: 50ms"),
      'c.yaml',
      {},
    );
    expect(describeRuleTable(table)).toContain(
      'store: redis (redis://127.0.0.1:6379), batch window 2ms, on error: open\n',
    );
    const drain = table.config.shutdown.drainTimeout;
    expect(retirementGraceMs(table.config, table.config)).toBe(drain + 2 * (2 + 50));
  });

  test('more than 10ms is refused, naming the bound', () => {
    expect(() => loadConfigText(config('batchWindow: 11ms'), 'c.yaml', {})).toThrow(
      'c.yaml:3:32: store.redis.batchWindow: must be at most 10ms (it delays every request that reaches Redis)',
    );
  });
});

describe('store.redis.batchesInFlight', () => {
  test('defaults to 1, and the summary says nothing of it then', () => {
    const table = loadConfigText(config("url: 'redis://127.0.0.1:6379'"), 'c.yaml', {});
    expect(table.config.store.redis.batchesInFlight).toBe(1);
    expect(describeRuleTable(table)).toContain('store: redis (redis://127.0.0.1:6379), on error: open\n');
  });

  test('0 (no bound) and 4 are shown', () => {
    const unbounded = loadConfigText(
      config("url: 'redis://127.0.0.1:6379', batchesInFlight: 0"),
      'c.yaml',
      {},
    );
    expect(describeRuleTable(unbounded)).toContain(
      'store: redis (redis://127.0.0.1:6379), batches in flight unbounded, on error: open\n',
    );
    const four = loadConfigText(config("url: 'redis://127.0.0.1:6379', batchesInFlight: 4"), 'c.yaml', {});
    expect(describeRuleTable(four)).toContain(
      'store: redis (redis://127.0.0.1:6379), 4 batches in flight, on error: open\n',
    );
  });

  test('more than 64, or a negative count, is refused', () => {
    expect(() => loadConfigText(config('batchesInFlight: 65'), 'c.yaml', {})).toThrow(
      'c.yaml:3:36: store.redis.batchesInFlight: Too big: expected number to be <=64',
    );
    expect(() => loadConfigText(config('batchesInFlight: -1'), 'c.yaml', {})).toThrow(
      'c.yaml:3:36: store.redis.batchesInFlight: Too small: expected number to be >=0',
    );
  });
});
