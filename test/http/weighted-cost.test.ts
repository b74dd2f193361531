// Weighted cost through a real gateway counting in Redis: a fixed cost, a cost from the body's
// declared size (411 when unknown), a cost the upstream reports after the response (stripped from
// it, clamped, ignored when garbled), and countOnly. A post-charge is sent to Redis before the
// client has its response, on the same connection, so the next request always sees it.
import { Readable } from 'node:stream';
import { request } from 'undici';
import { expect } from 'vitest';
import { gatewayTest } from '../helpers/fixtures.js';
import { gatewayYaml, send, type Reply } from '../helpers/gateway.js';
import { capturingLogger } from '../helpers/log-capture.js';

const log = capturingLogger('warn');

const test = gatewayTest({
  config: gatewayYaml(`
store:
  redis: { url: '\${REDIS_URL}', keyPrefix: 'cost:', commandTimeout: 2s }
identity:
  trustedProxies: [127.0.0.1]
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  five: { cost: 5, windows: [{ limit: 12, period: 1h, key: [ip] }] }
  bytes: { cost: { from: content-length, per: 10 }, windows: [{ limit: 10, period: 1h, key: [ip] }] }
  tokens: { chargeAfter: { header: X-Cost, max: 50 }, windows: [{ limit: 10, period: 1h, key: [ip] }] }
  logins: { countOnly: [401], windows: [{ limit: 2, period: 1h, key: [ip] }] }
routes:
  - { name: five, paths: ['/five/*'], upstream: app, limiters: [five] }
  - { name: bytes, paths: ['/bytes/*'], upstream: app, limiters: [bytes], maxBodySize: 1KB }
  - { name: tokens, paths: ['/cost'], upstream: app, limiters: [tokens] }
  - { name: logins, paths: ['/status/*'], upstream: app, limiters: [logins] }
`),
  options: { logger: log.logger },
});

const BODY = '{"error":{"code":"rate_limited","message":"Too Many Attempts."}}';
const from = (ip: string, extra: Record<string, string> = {}) => ({
  headers: { 'x-forwarded-for': ip, ...extra },
});
const counts = (r: Reply) => [r.status, r.headers['x-ratelimit-limit'], r.headers['x-ratelimit-remaining']];

test('cost 5 on a limit of 12: two requests pass, the third is refused', async ({ gateway }) => {
  const url = `${gateway.url()}/five/x`;
  expect(counts(await send(url, from('203.0.113.1')))).toEqual([200, '12', '7']);
  expect(counts(await send(url, from('203.0.113.1')))).toEqual([200, '12', '2']);
  const refused = await send(url, from('203.0.113.1'));
  expect(counts(refused)).toEqual([429, '12', '0']);
  expect(refused.text).toBe(BODY);
  expect(counts(await send(url, from('203.0.113.1')))).toEqual([429, '12', '0']);
  expect(counts(await send(url, from('203.0.113.2')))).toEqual([200, '12', '7']); // another budget
});

test("cost from the body's declared size, in tens of bytes, at least 1; a chunked body gets 411", async ({
  gateway,
}) => {
  const url = `${gateway.url()}/bytes/x`;
  const ip = '203.0.113.10';
  expect(counts(await send(url, { method: 'POST', body: 'x'.repeat(25), ...from(ip) }))).toEqual([
    200,
    '10',
    '7',
  ]);
  expect(counts(await send(url, { method: 'POST', body: 'x'.repeat(61), ...from(ip) }))).toEqual([
    200,
    '10',
    '0',
  ]);
  expect(counts(await send(url, from(ip)))).toEqual([429, '10', '0']); // a GET without a body costs 1
  // undici sends a stream body chunked, without a Content-Length.
  const chunked = await request(url, {
    method: 'POST',
    body: Readable.from([Buffer.from('abc')]),
    headers: { 'x-forwarded-for': '203.0.113.11' },
  });
  expect(chunked.statusCode).toBe(411);
  expect(await chunked.body.json()).toEqual({
    error: {
      code: 'length_required',
      message: "This route's rate limit is priced by the body's size: send a Content-Length.",
    },
  });
});

test('chargeAfter: the reported cost is charged after the response, and the header stripped', async ({
  gateway,
  upstream,
}) => {
  const url = (n: string) => `${gateway.url()}/cost?n=${encodeURIComponent(n)}`;
  const ip = '203.0.113.20';
  const first = await send(url('4'), from(ip));
  expect(counts(first)).toEqual([200, '10', '10']); // checked only: the window before its charge
  expect(first.headers['x-cost']).toBeUndefined();
  expect(first.text).toBe('{"upstream":true}');
  expect(counts(await send(url('0'), from(ip)))).toEqual([200, '10', '6']);
  // Garbled values charge nothing (and are logged); the window still has room for one.
  for (const bad of ['-3', '2.5', 'lots', ''])
    expect(counts(await send(url(bad), from(ip)))).toEqual([200, '10', '6']);
  // More than the room left: admitted (it had room for one), charged in full: the window overshoots.
  expect(counts(await send(url('9'), from(ip)))).toEqual([200, '10', '6']);
  const refused = await send(url('1'), from(ip));
  expect(counts(refused)).toEqual([429, '10', '0']);
  expect(refused.text).toBe(BODY);
  // A huge value is clamped to max (50).
  const other = '203.0.113.21';
  expect(counts(await send(url('99999999999999'), from(other)))).toEqual([200, '10', '10']);
  expect(counts(await send(url('1'), from(other)))).toEqual([429, '10', '0']);
  expect(upstream.seen.filter((s) => s.url.startsWith('/cost')).length).toBe(8);
  const warned = log.lines.filter((l) => l['msg'] === 'chargeAfter: the upstream reported no valid cost');
  expect(warned.length).toBeGreaterThanOrEqual(1); // throttled: at least the first
  expect(warned[0]).toMatchObject({ header: 'x-cost', value: '-3', problem: 'invalid' });
});

test('countOnly [401]: only failed logins are counted; a full window is refused before forwarding', async ({
  gateway,
}) => {
  const url = (status: number) => `${gateway.url()}/status/${status}`;
  const ip = '203.0.113.30';
  for (let i = 0; i < 3; i++) expect(counts(await send(url(200), from(ip)))).toEqual([200, '2', '2']);
  expect(counts(await send(url(401), from(ip)))).toEqual([401, '2', '2']);
  expect(counts(await send(url(403), from(ip)))).toEqual([403, '2', '1']);
  expect(counts(await send(url(401), from(ip)))).toEqual([401, '2', '1']);
  const refused = await send(url(200), from(ip));
  expect(counts(refused)).toEqual([429, '2', '0']);
  expect(refused.text).toBe(BODY);
});
