// Envoy's rate-limit service honours a limiter's allow and deny lists (by the remote_address entry)
// and its ban, in the same store call as its windows: real gateway, real redis-server.
import { expect } from 'vitest';
import { gatewayTest } from '../helpers/fixtures.js';
import { gatewayYaml, REDIS_STORE } from '../helpers/gateway.js';
import { sampleValue, scrape } from '../helpers/prometheus.js';
import { rlsClient, UNMATCHED } from '../helpers/rls-client.js';

const CONFIG = gatewayYaml(
  `
rateLimitService: { host: 127.0.0.1, port: 0 }
${REDIS_STORE}
upstreams: { app: { url: '\${UPSTREAM_URL}' } }
limiters:
  per-ip:
    descriptors: [{ domain: edge, entries: [{ key: remote_address }] }]
    windows: [{ limit: 1, period: 1h }]
    allow: { addresses: ['198.51.100.0/24'] }
    deny: { addresses: ['203.0.113.0/24'] }
    ban: { after: 1, within: 1h, for: 1h }
routes:
  - { name: all, paths: ['/*'], upstream: app }
`,
  { admin: true },
);

const test = gatewayTest({ config: CONFIG }).extend('rls', { scope: 'file' }, rlsClient);

const from = (addr: string) => ({
  domain: 'edge',
  descriptors: [{ entries: [{ key: 'remote_address', value: addr }] }],
});

test('allowed: OK uncounted; denied: OVER_LIMIT; banned after a refusal, with Retry-After', async ({
  rls,
}) => {
  for (let i = 0; i < 3; i++) {
    const allowed = await rls.shouldRateLimit(from('198.51.100.4'));
    expect(allowed.overallCode).toBe('OK');
    expect(allowed.statuses).toEqual([UNMATCHED]);
  }
  const denied = await rls.shouldRateLimit(from('203.0.113.9'));
  expect(denied.overallCode).toBe('OVER_LIMIT');
  expect(denied.statuses).toEqual([
    { code: 'OVER_LIMIT', currentLimit: null, limitRemaining: 0, durationUntilReset: null },
  ]);
  expect(denied.responseHeadersToAdd).toEqual([]);

  expect((await rls.shouldRateLimit(from('192.0.2.1'))).overallCode).toBe('OK');
  const refused = await rls.shouldRateLimit(from('192.0.2.1')); // the window's refusal: the strike that bans
  expect(refused.overallCode).toBe('OVER_LIMIT');
  expect(refused.statuses[0]!.currentLimit).toMatchObject({ name: 'per-ip.0' });
  const banned = await rls.shouldRateLimit(from('192.0.2.1'));
  expect(banned.overallCode).toBe('OVER_LIMIT');
  const retryAfter = Number(banned.responseHeadersToAdd.find((h) => h.key === 'retry-after')!.value);
  expect(retryAfter).toBeGreaterThan(3500);
  expect(retryAfter).toBeLessThanOrEqual(3600);
  expect(banned.statuses).toEqual([
    {
      code: 'OVER_LIMIT',
      currentLimit: null,
      limitRemaining: 0,
      durationUntilReset: { seconds: retryAfter, nanos: 0 },
    },
  ]);
  // Another address is not banned.
  expect((await rls.shouldRateLimit(from('192.0.2.2'))).overallCode).toBe('OK');
});

test('a limiter two descriptors match is counted exempt once per call, as an HTTP request is', async ({
  rls,
  gateway,
}) => {
  const metric = 'tollgate_requests_total{limiter="per-ip",decision="exempt"}';
  const before = sampleValue(await scrape(gateway.adminUrl!), metric) ?? 0;
  const twice = {
    domain: 'edge',
    descriptors: [
      { entries: [{ key: 'remote_address', value: '198.51.100.5' }] },
      { entries: [{ key: 'remote_address', value: '198.51.100.5' }] },
    ],
  };
  for (let i = 0; i < 3; i++) {
    const answer = await rls.shouldRateLimit(twice);
    expect(answer.overallCode).toBe('OK');
    expect(answer.statuses).toEqual([UNMATCHED, UNMATCHED]);
  }
  expect(sampleValue(await scrape(gateway.adminUrl!), metric)).toBe(before + 3);
});
