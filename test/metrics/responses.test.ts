// Issue 22: every answer counted by route and status with its time, the last reload's gauges, and
// the self-audit counter of requests let past a limit (fail-open, post-charge overshoot).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect } from 'vitest';
import { reloadFromFile } from '../../src/cli/reloader.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { WrappingStore, type WindowRequest, type WindowResult } from '../../src/store/window-store.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml, send, silentLogger } from '../helpers/gateway.js';
import { sampleValue, samples, scrape } from '../helpers/prometheus.js';
import { TEST_JWT_SECRET } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait.js';

/** The in-process store, failing every call while `failing` is set. */
class SwitchableStore extends WrappingStore {
  failing = false;

  hit(windows: readonly WindowRequest[]): Promise<WindowResult[]> {
    if (this.failing) return Promise.reject(new Error('store down (test)'));
    return this.inner.hit(windows);
  }
}

/** Literal URLs, so the same text serves as a config file for reloadFromFile. */
const config = (upstreamUrl: string) =>
  gatewayYaml(
    `
identity:
  trustedProxies: [127.0.0.1]
  jwt: { secret: '${TEST_JWT_SECRET}', algorithms: [HS256], issuer: tollgate, audience: tollgate-widget }
upstreams:
  app: { url: '${upstreamUrl}' }
limiters:
  two: { windows: [{ limit: 2, period: 1m, key: [ip] }] }
  visitor: { windows: [{ limit: 100, period: 1m, key: [jwt] }] }
  tokens: { chargeAfter: { header: X-Cost, max: 50 }, windows: [{ limit: 10, period: 1h, key: [ip] }] }
  fails-open: { onStoreError: open, windows: [{ limit: 100, period: 1m, key: [ip] }] }
  watching: { shadow: true, onStoreError: open, windows: [{ limit: 100, period: 1m, key: [ip] }] }
routes:
  - { name: two, paths: ['/two/*'], upstream: app, limiters: [two] }
  - { name: visitor, paths: ['/v/*'], upstream: app, limiters: [visitor] }
  - { name: tokens, paths: ['/cost'], upstream: app, limiters: [tokens] }
  - { name: open, paths: ['/open/*'], upstream: app, limiters: [fails-open, watching] }
  - { name: held, paths: ['/hang'], upstream: app }
`,
    { admin: true },
  );

const test = serversTest
  .extend(
    'store',
    { scope: 'file' },
    () => new SwitchableStore(new MemoryStore({ maxKeys: 1000, sweepIntervalMs: 60_000 })),
  )
  .extend('gateway', { scope: 'file' }, ({ upstream, gateways, store }) =>
    gateways.start(config(upstream.url), {}, { store }),
  )
  .extend(
    'metrics',
    { scope: 'file' },
    ({ gateway }) =>
      () =>
        scrape(gateway.adminUrl!),
  );

const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });

/** Scrapes until `done` holds (responses are counted when they close, just after the client has them). */
const scrapeUntil = (scrapeNow: () => Promise<string>, done: (text: string) => boolean, what: string) =>
  waitFor(scrapeNow, done, { what, timeoutMs: 20_000 });

/** Scrapes until `series` reads `value`. */
const metricReaches = (scrapeNow: () => Promise<string>, series: string, value: number) =>
  scrapeUntil(scrapeNow, (text) => sampleValue(text, series) === value, `${series} ${value}`);

describe('responses, latency and the reload gauges', () => {
  test('at start: the last load succeeded, each limiter audited at 0, nothing open', async ({ metrics }) => {
    const before = Date.now() / 1000;
    const m = await metrics();
    expect(sampleValue(m, 'tollgate_config_last_reload_success')).toBe(1);
    const at = sampleValue(m, 'tollgate_config_last_reload_timestamp_seconds')!;
    expect(at).toBeGreaterThan(before - 600);
    expect(at).toBeLessThanOrEqual(Date.now() / 1000);
    expect(samples(m, 'tollgate_admitted_over_limit_total')).toEqual([
      'tollgate_admitted_over_limit_total{limiter="two"} 0',
      'tollgate_admitted_over_limit_total{limiter="visitor"} 0',
      'tollgate_admitted_over_limit_total{limiter="tokens"} 0',
      'tollgate_admitted_over_limit_total{limiter="fails-open"} 0',
      'tollgate_admitted_over_limit_total{limiter="watching"} 0',
    ]);
    expect(samples(m, 'tollgate_responses_total')).toEqual([]);
    expect(samples(m, 'tollgate_open_requests')).toEqual(['tollgate_open_requests 0']);
  });

  test('every answer is counted by route and status, its own and the upstream’s, with its time', async ({
    gateway,
    metrics,
  }) => {
    const base = gateway.url();
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await send(`${base}/two/x`, from('198.51.100.1'))).status);
    statuses.push((await send(`${base}/nowhere`)).status);
    statuses.push((await send(`${base}/healthz`)).status);
    statuses.push((await send(`${base}/v/messages`, { method: 'POST' })).status);
    expect(statuses).toEqual([200, 200, 429, 404, 200, 401]);

    const expected = [
      'tollgate_responses_total{route="two",status="200"} 2',
      'tollgate_responses_total{route="two",status="429"} 1',
      'tollgate_responses_total{route="",status="404"} 1',
      'tollgate_responses_total{route="",status="200"} 1',
      'tollgate_responses_total{route="visitor",status="401"} 1',
    ].sort();
    const responses = (text: string) => samples(text, 'tollgate_responses_total').sort();
    const m = await scrapeUntil(
      metrics,
      (text) => JSON.stringify(responses(text)) === JSON.stringify(expected),
      'the six responses',
    );
    expect(responses(m)).toEqual(expected);
    expect(sampleValue(m, 'tollgate_request_duration_seconds_count{route="two"}')).toBe(3);
    expect(sampleValue(m, 'tollgate_request_duration_seconds_bucket{le="+Inf",route="two"}')).toBe(3);
    expect(sampleValue(m, 'tollgate_request_duration_seconds_count{route=""}')).toBe(2);
    expect(sampleValue(m, 'tollgate_request_duration_seconds_sum{route="two"}')).toBeGreaterThan(0);
    expect(sampleValue(m, 'tollgate_open_requests')).toBe(0);
    // Nothing here went past a limit.
    expect(sampleValue(m, 'tollgate_admitted_over_limit_total{limiter="two"}')).toBe(0);
  });

  test('a request in progress is open and holds its slot; one its client left before the answer is a 499', async ({
    gateway,
    upstream,
    metrics,
  }) => {
    const client = new AbortController();
    const held = request(`${gateway.url()}/hang`, { signal: client.signal }).catch(() => undefined);
    const hungBefore = upstream.hung;
    await waitFor(
      () => upstream.hung,
      (n) => n > hungBefore,
      { what: 'the request at the upstream' },
    );
    const m = await metrics();
    expect(sampleValue(m, 'tollgate_open_requests')).toBe(1);
    // The default per-address bound (64) holds its slot.
    expect(sampleValue(m, 'tollgate_in_flight{kind="requests"}')).toBe(1);
    client.abort();
    await held;
    const after = await metricReaches(metrics, 'tollgate_responses_total{route="held",status="499"}', 1);
    expect(sampleValue(after, 'tollgate_open_requests')).toBe(0);
    expect(sampleValue(after, 'tollgate_request_duration_seconds_count{route="held"}')).toBe(1);
  });

  test('a failed reload sets the gauge to 0 and keeps the config; a good one sets it back to 1', async ({
    gateway,
    upstream,
    metrics,
  }) => {
    const dir = await mkdtemp(join(tmpdir(), 'tollgate-reload-gauge-'));
    try {
      const bad = join(dir, 'bad.yaml');
      await writeFile(bad, 'limiters: { two: { windows: [{ limit: -1 }] } }\n');
      const startedAt = sampleValue(await metrics(), 'tollgate_config_last_reload_timestamp_seconds')!;
      expect(await reloadFromFile(gateway, bad, silentLogger)).toBe(false);
      let m = await metrics();
      expect(sampleValue(m, 'tollgate_config_last_reload_success')).toBe(0);
      expect(sampleValue(m, 'tollgate_config_reloads_total{result="failure"}')).toBe(1);
      const failedAt = sampleValue(m, 'tollgate_config_last_reload_timestamp_seconds')!;
      expect(failedAt).toBeGreaterThanOrEqual(startedAt);

      const good = join(dir, 'good.yaml');
      await writeFile(good, config(upstream.url));
      expect(await reloadFromFile(gateway, good, silentLogger)).toBe(true);
      m = await metrics();
      expect(sampleValue(m, 'tollgate_config_last_reload_success')).toBe(1);
      expect(sampleValue(m, 'tollgate_config_reloads_total{result="success"}')).toBe(1);
      expect(sampleValue(m, 'tollgate_config_last_reload_timestamp_seconds')).toBeGreaterThanOrEqual(
        failedAt,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('tollgate_admitted_over_limit_total', () => {
  test('fail-open: each request let through uncounted, under each enforcing limiter (never a shadow one)', async ({
    gateway,
    store,
    metrics,
  }) => {
    store.failing = true;
    try {
      for (const path of ['/open/a', '/open/b']) {
        const reply = await send(`${gateway.url()}${path}`, from('198.51.100.2'));
        expect(reply.status).toBe(200);
      }
    } finally {
      store.failing = false;
    }
    expect((await send(`${gateway.url()}/open/c`, from('198.51.100.2'))).status).toBe(200); // counted again
    const m = await metricReaches(metrics, 'tollgate_responses_total{route="open",status="200"}', 3);
    expect(sampleValue(m, 'tollgate_admitted_over_limit_total{limiter="fails-open"}')).toBe(2);
    expect(sampleValue(m, 'tollgate_admitted_over_limit_total{limiter="watching"}')).toBe(0);
    expect(sampleValue(m, 'tollgate_requests_total{limiter="fails-open",decision="store_error"}')).toBe(2);
    expect(sampleValue(m, 'tollgate_requests_total{limiter="fails-open",decision="allowed"}')).toBe(1);
    expect(sampleValue(m, 'tollgate_store_uncounted_total')).toBe(2);
  });

  test('chargeAfter: a charge that finds its window spent is one admission past the limit', async ({
    gateway,
    metrics,
  }) => {
    const url = (n: number) => `${gateway.url()}/cost?n=${n}`;
    const ip = '198.51.100.3';
    // 4 + 4 fit the 10; the third is admitted (8 + 1 ≤ 10), then charged 4: 12 > 10.
    const remaining = [];
    for (let i = 0; i < 3; i++)
      remaining.push((await send(url(4), from(ip))).headers['x-ratelimit-remaining']);
    expect(remaining).toEqual(['10', '6', '2']);
    await metricReaches(metrics, 'tollgate_admitted_over_limit_total{limiter="tokens"}', 1);
    // The window is spent: refused before forwarding, nothing charged, nothing more past the limit.
    expect((await send(url(4), from(ip))).status).toBe(429);
    // Another address's charges that fit are no overshoot (the second request sees the first's charge).
    const other = '198.51.100.4';
    expect((await send(url(3), from(other))).headers['x-ratelimit-remaining']).toBe('10');
    expect((await send(url(0), from(other))).headers['x-ratelimit-remaining']).toBe('7');
    const m = await metricReaches(metrics, 'tollgate_responses_total{route="tokens",status="429"}', 1);
    expect(sampleValue(m, 'tollgate_admitted_over_limit_total{limiter="tokens"}')).toBe(1);
  });
});
