// Envoy's calls feed the near-limit histogram, the near-limit counter, the top keys and the recent
// refusals exactly as HTTP requests do: the same sequence over gRPC and over HTTP, on twin limiters,
// gives the same /metrics samples and the same operator figures. Real gateway, real redis-server.
import { expect } from 'vitest';
import { gatewayTest } from '../helpers/fixtures.js';
import { gatewayYaml, REDIS_STORE, send } from '../helpers/gateway.js';
import { samples, scrape } from '../helpers/prometheus.js';
import { rlsClient } from '../helpers/rls-client.js';

const CONFIG = gatewayYaml(
  `
rateLimitService: { host: 127.0.0.1, port: 0 }
${REDIS_STORE}
identity: { trustedProxies: [127.0.0.1] }
upstreams: { app: { url: '\${UPSTREAM_URL}' } }
limiters:
  near-rls:
    descriptors: [{ domain: near, entries: [{ key: remote_address }] }]
    windows: [{ limit: 5, period: 1m }, { limit: 100, period: 1h }]
  near-http:
    windows: [{ limit: 5, period: 1m, key: [ip] }, { limit: 100, period: 1h, key: [ip] }]
routes:
  - { name: http, paths: ['/*'], upstream: app, limiters: [near-http] }
`,
  { admin: true },
);

const test = gatewayTest({ config: CONFIG }).extend('rls', { scope: 'file' }, rlsClient);

/** The near-limit samples of one limiter, with its name taken out (so the twins compare). */
const nearSamples = (text: string, limiter: string) =>
  samples(text)
    .filter((l) => /^tollgate_(limit_usage|near_limit)_total\{/.test(l) && l.includes(`limiter="${limiter}"`))
    .map((l) => l.replace(`limiter="${limiter}"`, 'limiter="L"'))
    .sort();

test('six calls of one address over gRPC and six HTTP requests: the same histogram, counter and top key', async ({
  gateway,
  rls,
}) => {
  const codes: string[] = [];
  for (let i = 0; i < 6; i++) {
    const r = await rls.shouldRateLimit({
      domain: 'near',
      descriptors: [{ entries: [{ key: 'remote_address', value: '198.51.100.1' }] }],
    });
    codes.push(r.overallCode);
  }
  expect(codes).toEqual(['OK', 'OK', 'OK', 'OK', 'OK', 'OVER_LIMIT']);
  // And a second address, once: a second key in the top keys.
  await rls.shouldRateLimit({
    domain: 'near',
    descriptors: [{ entries: [{ key: 'remote_address', value: '198.51.100.2' }] }],
  });
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++)
    statuses.push(
      (await send(`${gateway.url()}/x`, { headers: { 'x-forwarded-for': '198.51.100.1' } })).status,
    );
  expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  await send(`${gateway.url()}/x`, { headers: { 'x-forwarded-for': '198.51.100.2' } });

  const text = await scrape(gateway.adminUrl!);
  // 1/5 and 2/5: 0-50 %; 3/5 and 4/5: 50-80 %; 5/5: 80-100 % (near the limit); the 6th refused.
  // The hour window: 6 hits of 100, all under half; the refused call counted nowhere (all or nothing).
  const expected = [
    'tollgate_limit_usage_total{limiter="L",window="1h",bucket="0-50"} 6',
    'tollgate_limit_usage_total{limiter="L",window="1m",bucket="0-50"} 3',
    'tollgate_limit_usage_total{limiter="L",window="1m",bucket="50-80"} 2',
    'tollgate_limit_usage_total{limiter="L",window="1m",bucket="80-100"} 1',
    'tollgate_limit_usage_total{limiter="L",window="1m",bucket="refused"} 1',
    'tollgate_near_limit_total{limiter="L",window="1m"} 1',
  ];
  expect(nearSamples(text, 'near-rls')).toEqual(expected);
  expect(nearSamples(text, 'near-http')).toEqual(expected);

  const view = (await send(`${gateway.adminUrl}/v1/limiters`)).json() as {
    limiters: { name: string; windows: unknown[]; top: { count: number; error: number }[] }[];
  };
  const rlsView = view.limiters.find((l) => l.name === 'near-rls')!;
  const httpView = view.limiters.find((l) => l.name === 'near-http')!;
  expect(rlsView.top.map((t) => [t.count, t.error])).toEqual([
    [6, 0],
    [1, 0],
  ]);
  expect(rlsView.windows).toEqual(httpView.windows);
  expect(httpView.top.map((t) => [t.count, t.error])).toEqual(rlsView.top.map((t) => [t.count, t.error]));

  // The recent refusals: the HTTP request's, then the call's (newest first), each with its key.
  const operator = (await send(`${gateway.adminUrl}/v1/operator`)).json() as {
    refusals: { route: string; limiter: string; decision: string; key?: string }[];
  };
  expect(operator.refusals.map(({ route, limiter, decision }) => [route, limiter, decision])).toEqual([
    ['http', 'near-http', 'limited'],
    ['envoy:near', 'near-rls', 'limited'],
  ]);
  expect(operator.refusals.every((r) => typeof r.key === 'string' && r.key.length > 0)).toBe(true);
});
