// The operator's page as an operator reads it, in headless Chromium (Debian's package): the
// limiters with their decisions and live rates (charted with uPlot, served from node_modules), the
// near-limit distribution, the heaviest keys, the recent refusals, the store and the config, under
// a CSP that nothing on the page violates; an action without the right token is refused. With
// UPDATE_SCREENSHOTS=1 it writes docs/images/operator.png (the screenshot in docs/metrics.md); else
// a temporary file, so a test run never changes the checkout.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { chromium, test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';
import { pageProblems } from '../helpers/page-problems.js';

const config = gatewayYaml(`
admin: { host: 127.0.0.1, port: 0, token: operator-token-123 }
store:
  redis: { url: '\${REDIS_URL}', keyPrefix: 'operator-page:' }
identity:
  trustedProxies: [127.0.0.1]
log: { keyParts: true }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  api:
    windows: [{ limit: 10, period: 1d, key: [ip] }]
  per-agent:
    shadow: true
    windows: [{ limit: 4, period: 1d, key: [ip, user_agent] }]
routes:
  - { name: api, paths: ['/api/*'], upstream: app, limiters: [api, per-agent] }
`);

const test = serversTest.extend('browser', { scope: 'file' }, chromium);

test('the operator page: live rates, near-limit, top keys, refusals, store and config; screenshot', async ({
  gateways,
  gatewayEnv,
  browser,
}) => {
  const gateway = await gateways.start(config, gatewayEnv);
  const traffic = async (rounds: number) => {
    for (let i = 0; i < rounds; i++) {
      for (const [ip, n] of [
        ['198.51.100.7', 4],
        ['198.51.100.8', 2],
        ['198.51.100.9', 1],
      ] as const) {
        for (let j = 0; j < n; j++) {
          await send(`${gateway.url()}/api/items`, {
            headers: { 'x-forwarded-for': ip, 'user-agent': 'curl/8' },
          });
        }
      }
    }
  };
  await traffic(2); // 198.51.100.7: 8 of 10; its 5th request on is past the shadow limiter's 4

  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const violations = pageProblems(page);
  const res = await page.goto(`${gateway.adminUrl}/ui`);
  expect(res!.status()).toBe(200);

  // Server-rendered: there at once, before any refresh (the rates need two samples).
  expect(await page.locator('#limiters tbody tr').allInnerTexts()).toEqual([
    expect.stringMatching(/^api\t14\t0\t0\t0\t0\t0\t/),
    expect.stringMatching(/^per-agent shadow\t10\t0\t4\t0\t0\t0\t/),
  ]);
  // The page counts its refreshes in body[data-samples]; waited for by selector (the CSP forbids eval).
  await page.waitForSelector('body[data-samples]', { timeout: 60_000 });
  await traffic(1); // 198.51.100.7 reaches 10 of 10, then is refused twice
  const seen = await page.locator('body').getAttribute('data-samples');
  // The next refresh after that traffic.
  await page.waitForSelector(`body:not([data-samples="${seen}"])`, { state: 'attached', timeout: 60_000 });
  const refusals = await page.locator('#refusals tbody tr').allInnerTexts();
  expect(refusals).toEqual([
    expect.stringMatching(/\tapi\tapi\tlimited\t:[\w+/]+=*:$/),
    expect.stringMatching(/\tapi\tapi\tlimited\t:[\w+/]+=*:$/),
  ]);
  expect(await page.locator('#usage tbody tr').allInnerTexts()).toEqual([
    // 198.51.100.7: 1–5, 6–8, 9–10 of 10, then 2 refused; .8: 1–5, 6; .9: 1–3.
    expect.stringMatching(/^api\t1d\t10\t13\t4\t2\t2\t\s*19 %$/),
    expect.stringMatching(/^per-agent\t1d\t4\t/),
  ]);
  expect(await page.locator('details table.top').first().locator('tbody tr').first().innerText()).toMatch(
    /^:[\w+/]+=*:\t12\t0\tip=[\w-]+$/,
  );
  expect(await page.locator('#store-ready').innerText()).toBe('ready');
  expect(await page.locator('#config-version').innerText()).toMatch(/^[0-9a-f]{12}$/);
  expect(await page.locator('#rates canvas').count()).toBe(1);
  expect(await page.locator('td.rate').first().innerText()).toMatch(
    /^\d+\.\d · \d+\.\d · \d+\.\d · \d+\.\d$/,
  );

  // An action without the right token: refused, and said so.
  await page.fill('#lift-ban input[name=token]', 'wrong');
  await page.fill('#lift-ban input[name=limiter]', 'api');
  await page.fill('#lift-ban input[name=key]', 'x');
  await page.click('#lift-ban button');
  await expect
    .poll(() => page.locator('#action-result').innerText(), { timeout: 30_000 })
    .toBe('unauthorized: Send "Authorization: Bearer <admin token>".');

  expect(violations).toEqual([]);
  const folder =
    process.env['UPDATE_SCREENSHOTS'] === '1' ? 'docs/images' : mkdtempSync(join(tmpdir(), 'operator-'));
  mkdirSync(folder, { recursive: true });
  await page.screenshot({ path: join(folder, 'operator.png'), fullPage: true });
  await page.close();
});

test('the listener the page tests share sees a CSP refusal and a script error', async ({ browser }) => {
  const page = await browser.newPage();
  const problems = pageProblems(page);
  await page.setContent(
    `<meta http-equiv="Content-Security-Policy" content="script-src 'none'"><script>1</script>`,
  );
  await expect.poll(() => problems.length).toBe(1);
  expect(problems[0]).toMatch(/inline script violates the following Content Security Policy directive/);

  const strict = await browser.newPage();
  const [some, all] = [pageProblems(strict), pageProblems(strict, { consoleErrors: true })];
  await strict.setContent(`<script>console.error('logged'); throw new Error('thrown')</script>`);
  await expect.poll(() => all.length).toBe(2);
  expect(some).toEqual(['thrown']);
  expect([...all].sort()).toEqual(['logged', 'thrown']);
  await Promise.all([page.close(), strict.close()]);
});
