// With `workers: 2`, the primary's admin listener serves the operator page and its JSON (GET /ui,
// /v1/operator, /v1/limiters) with the workers' figures summed, as /metrics sums theirs: a real
// `tollgate start` with two workers, requests on new connections (spread by the kernel over both),
// the exact sums in the JSON, and the page read in headless Chromium under its CSP.
import { expect } from 'vitest';
import { chromium } from '../helpers/fixtures.js';
import { gatewayYaml, REDIS_STORE, send } from '../helpers/gateway.js';
import { pageProblems } from '../helpers/page-problems.js';
import { sampleValue, scrape } from '../helpers/prometheus.js';
import { workersGatewayTest } from '../helpers/workers-gateway.js';

const config = gatewayYaml(`
workers: 2
reload: { watch: false }
admin: { host: 127.0.0.1, port: 0, token: w0rkers-op }
${REDIS_STORE}
identity: { trustedProxies: [127.0.0.1] }
log: { keyParts: true }
upstreams: { app: { url: "\${UPSTREAM_URL}" } }
limiters:
  api: { windows: [{ limit: 5, period: 1h, key: [ip] }] }
routes:
  - { name: r, paths: ["/*"], upstream: app, limiters: [api] }
`);

const test = workersGatewayTest(config).extend('browser', { scope: 'file' }, chromium);

interface View {
  workers: { count: number; answered: number };
  store: { ready: boolean; errors: number; latency: { count: number } };
  limiters: {
    name: string;
    decisions: Record<string, number>;
    windows: { window: string; limit: number; usage: Record<string, number>; nearLimit: number }[];
    top: { key: string; count: number; error: number; parts?: Record<string, string> }[];
  }[];
  refusals: { route: string; limiter: string; decision: string; key?: string }[];
}

// Two worker processes and Chromium on a loaded machine: generous, never a timing assertion.
test(
  'the primary serves the operator page and JSON with the two workers summed',
  { timeout: 240_000 },
  async ({ gp, agent, browser }) => {
    const statuses: number[] = [];
    for (const [ip, n] of [
      ['198.51.100.1', 7],
      ['198.51.100.2', 2],
    ] as const)
      for (let i = 0; i < n; i++) {
        const reply = await send(`${gp.url}/x`, {
          dispatcher: agent,
          headers: { connection: 'close', 'x-forwarded-for': ip },
        });
        statuses.push(reply.status);
      }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 200, 200]);

    const reply = await send(`${gp.adminUrl}/v1/operator`);
    expect(reply.status).toBe(200);
    const view = reply.json() as View;
    expect(view.workers).toEqual({ count: 2, answered: 2 });
    expect(view.store).toMatchObject({ ready: true, errors: 0 });
    const api = view.limiters.find((l) => l.name === 'api')!;
    expect(api.decisions).toEqual({ allowed: 7, limited: 2 });
    // .1: 1–2 of 5 under half, 3–4 to 80 %, 5 near, then 2 refused; .2: 1–2 under half.
    expect(api.windows).toEqual([
      {
        window: '1h',
        limit: 5,
        algorithm: 'fixed',
        usage: { '0-50': 4, '50-80': 2, '80-100': 1, refused: 2 },
        nearLimit: 1,
      },
    ]);
    // Each worker's sketch saw its own share of .1's 7 requests: summed here.
    expect(api.top.map((t) => [t.count, t.error])).toEqual([
      [7, 0],
      [2, 0],
    ]);
    expect(api.top.every((t) => t.parts && typeof t.parts['ip'] === 'string')).toBe(true);
    expect(view.refusals.map((r) => [r.route, r.limiter, r.decision])).toEqual([
      ['r', 'api', 'limited'],
      ['r', 'api', 'limited'],
    ]);
    // The same sums as the primary's /metrics, aggregated by prom-client.
    const metrics = await scrape(gp.adminUrl!);
    expect(sampleValue(metrics, 'tollgate_requests_total{limiter="api",decision="allowed"}')).toBe(7);
    expect(sampleValue(metrics, 'tollgate_limit_usage_total{limiter="api",window="1h",bucket="0-50"}')).toBe(
      4,
    );
    expect(sampleValue(metrics, 'tollgate_near_limit_total{limiter="api",window="1h"}')).toBe(1);
    const limiters = (await send(`${gp.adminUrl}/v1/limiters`)).json() as { limiters: View['limiters'] };
    expect(limiters.limiters.find((l) => l.name === 'api')!.windows).toEqual(api.windows);

    // The page, in Chromium: server-rendered from the summed view, under its CSP.
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const violations = pageProblems(page);
    const res = await page.goto(`${gp.adminUrl}/ui`);
    expect(res!.status()).toBe(200);
    expect(await page.locator('#scope').innerText()).toBe(
      "The sum of this instance's 2 workers (2 answered)",
    );
    expect(await page.locator('#limiters tbody tr').allInnerTexts()).toEqual([
      expect.stringMatching(/^api\t7\t2\t0\t0\t0\t0\t/),
    ]);
    expect(await page.locator('#usage tbody tr').allInnerTexts()).toEqual([
      expect.stringMatching(/^api\t1h\t5\t4\t2\t1\t2\t\s*33 %$/),
    ]);
    expect(await page.locator('#refusals tbody tr').count()).toBe(2);
    expect(await page.locator('#store-ready').innerText()).toBe('ready');
    // The script refreshes from the primary too, and charts the rates.
    await page.waitForSelector('body[data-samples]', { timeout: 60_000 });
    expect(await page.locator('#rates canvas').count()).toBe(1);
    expect(violations).toEqual([]);
    await page.close();
  },
);
