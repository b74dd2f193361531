// The statistics and report pages in headless Chromium (Debian's package), through the shipped
// config's gateway with its embedded services and a real SQLite file: each privacy mode, the date
// picker, the sub-pages, the CSV download, escaping, and screenshots for the README.
import { once } from 'node:events';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import { clientAddresses } from '../../../helpers/clients.js';
import { ALICE_KEY, BOB_KEY } from '../../../helpers/embedded.js';
import { chromium, embeddedTest } from '../../../helpers/fixtures.js';
import { send } from '../../../helpers/gateway.js';
import { pageProblems } from '../../../helpers/page-problems.js';
import { waitFor } from '../../../helpers/wait.js';
import { REPORT_PASSWORD, seed, SITE_PASSWORD, SITES, XSS } from '../../../helpers/pages.js';

/** Where the screenshots go: docs/images with SCREENSHOTS=docs (for the README), else a temp dir. */
const SHOTS = process.env['SCREENSHOTS'] === 'docs' ? 'docs/images' : join(tmpdir(), 'tollgate-shots');

/** Each test sets up what it first names (a gateway, its seeded data, Chromium): time for that. */
const SETUP = { timeout: 90_000 };

const test = embeddedTest({ env: { TRUSTED_PROXIES: '127.0.0.1' } })
  .extend('base', { scope: 'file' }, ({ gateway }) => gateway.url())
  .extend('seeded', { scope: 'file' }, ({ base, dataDir }) => seed(base, dataDir, Date.now()))
  // Chromium resolves *.localhost to the loopback address itself.
  .extend('analyzer', { scope: 'file' }, ({ base }) => base.replace('127.0.0.1', 'analyzer.localhost'))
  .extend('browser', { scope: 'file' }, chromium)
  /** A fresh browser profile (no cookies), seen by the gateway as a client IP of its own; the data seeded. */
  .extend('visitor', { scope: 'file' }, ({ browser, seeded: _seeded }) => {
    const newClient = clientAddresses('192.0.2.');
    return async (options: { width?: number } = {}): Promise<{ context: BrowserContext; page: Page }> => {
      const context = await browser.newContext({
        acceptDownloads: true,
        extraHTTPHeaders: { 'X-Forwarded-For': newClient() },
        viewport: { width: options.width ?? 1200, height: 900 },
      });
      return { context, page: await context.newPage() };
    };
  });

async function signIn(page: Page, origin: string, key: string, next: string): Promise<void> {
  await page.goto(`${origin}/_/login?next=${encodeURIComponent(next)}`);
  await page.getByLabel('API key').fill(key);
  await Promise.all([
    page.waitForURL(`${origin}${next}`),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
}

describe('statistics pages', SETUP, () => {
  test('a public page: totals, the uPlot chart, top tables with the payload as text', async ({
    base,
    visitor,
  }) => {
    const { context, page } = await visitor();
    const scriptErrors = pageProblems(page, { consoleErrors: true });
    const response = await page.goto(`${base}/${SITES.public}`);
    expect(response!.status()).toBe(200);
    await expect.poll(() => page.locator('#chart').getAttribute('data-drawn')).toBe('true');
    expect(await page.locator('#chart canvas').count()).toBe(1);
    expect(await page.locator('#total-visitors').textContent()).toBe('5');
    expect(await page.locator('#total-pageviews').textContent()).toBe('6');
    const pages = page.getByRole('table', { name: 'Top pages' });
    expect(await pages.getByRole('cell', { name: `/${XSS}`, exact: true }).count()).toBe(1);
    const referrers = page.getByRole('table', { name: 'Top referrers' });
    expect(await referrers.getByRole('cell', { name: XSS, exact: true }).count()).toBe(1);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.title()).toBe('Overview · public.example · tollgate');
    expect(scriptErrors).toEqual([]);
    // docs/images/statistics*.png come from test/services/websites/pages/statistics-browser.test.ts.
    const shots = join(tmpdir(), 'tollgate-shots');
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: join(shots, 'statistics.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(shots, 'statistics-mobile.png'), fullPage: false });
    // No horizontal scrolling on a phone.
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await context.close();
  });

  test('the date picker narrows the range; the sub-pages keep it', async ({ base, visitor }) => {
    const { context, page } = await visitor();
    await page.goto(`${base}/${SITES.public}`);
    const today = new Date().toISOString().slice(0, 10);
    await page.getByLabel('From', { exact: true }).fill(today);
    await page.getByLabel('To', { exact: true }).fill(today);
    await Promise.all([page.waitForURL(/from=/), page.getByRole('button', { name: 'Show' }).click()]);
    expect(new URL(page.url()).search).toBe(`?from=${today}&to=${today}`);
    expect(await page.locator('#total-pageviews').textContent()).toBe('2');
    await Promise.all([
      page.waitForURL(/\/public\.example\/pages/),
      page
        .getByRole('navigation', { name: 'Statistics' })
        .getByRole('link', { name: 'Pages', exact: true })
        .click(),
    ]);
    expect(new URL(page.url()).pathname).toBe('/public.example/pages');
    expect(new URL(page.url()).search).toBe(`?from=${today}&to=${today}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('public.example Pages');
    const rows = await page.locator('#top tbody tr').allTextContents();
    expect(rows.map((r) => r.replace(/\s+/g, ' ').trim())).toEqual(['/ 1 50.0%', '/docs,"quoted" 1 50.0%']);
    await context.close();
  });

  test('the search field of a dimension page filters its table and keeps the range', async ({
    base,
    visitor,
  }) => {
    const { context, page } = await visitor();
    const day = (ago: number) => new Date(Date.now() - ago * 86_400_000).toISOString().slice(0, 10);
    await page.goto(`${base}/${SITES.public}/referrers?from=${day(3)}&to=${day(0)}`);
    const search = page.getByRole('search', { name: 'Search referrers' });
    await search.getByLabel('Search referrers').fill(XSS);
    await Promise.all([page.waitForURL(/search=/), search.getByRole('button', { name: 'Search' }).click()]);
    const url = new URL(page.url());
    expect([
      url.searchParams.get('from'),
      url.searchParams.get('to'),
      url.searchParams.get('search'),
    ]).toEqual([day(3), day(0), XSS]);
    expect(await page.locator('#search-term').textContent()).toBe(XSS);
    const rows = await page.locator('#top tbody tr').allTextContents();
    expect(rows.map((r) => r.replace(/\s+/g, ' ').trim())).toEqual([`${XSS} 1 100.0%`]);
    expect(await page.title()).not.toBe('pwned');
    await context.close();
  });

  test('the realtime page lists the last minutes', async ({ base, visitor }) => {
    const { context, page } = await visitor();
    await page.goto(`${base}/${SITES.public}/realtime`);
    expect(await page.locator('#recent-pageviews').textContent()).toBe('2');
    await context.close();
  });

  test('the CSV download', async ({ base, visitor }) => {
    const { context, page } = await visitor();
    await page.goto(`${base}/${SITES.public}/referrers`);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(
      /^public\.example-referrers-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv$/,
    );
    const text = readFileSync((await download.path())!, 'utf8');
    expect(text).toBe(
      [
        'value,count,share',
        'news.example,3,60.0%',
        `"<img src=x onerror=""document.title='pwned'"">",1,20.0%`,
        'search.example,1,20.0%',
        '',
      ].join('\r\n'),
    );
    await context.close();
  });

  test('a private page: 404 to a stranger and another user; its owner signs in with a key, then out', async ({
    base,
    visitor,
  }) => {
    const { context, page } = await visitor();
    const stranger = await page.goto(`${base}/${SITES.private}`);
    expect(stranger!.status()).toBe(404);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Page not found');

    await signIn(page, base, BOB_KEY, '/');
    expect((await page.goto(`${base}/${SITES.private}`))!.status()).toBe(404);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${base}/_/login?next=%2F`);

    await page.goto(`${base}/_/login?next=${encodeURIComponent(`/${SITES.private}`)}`);
    await page.getByLabel('API key').fill('tg_wrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('That API key is not valid.');

    await signIn(page, base, ALICE_KEY, `/${SITES.private}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('private.example Overview');
    const [session] = await context.cookies();
    expect(session).toMatchObject({
      name: 'tg_session',
      httpOnly: true,
      sameSite: 'Lax',
      path: '/',
      secure: false,
    });
    expect(session!.expires * 1000 - Date.now()).toBeGreaterThan(11 * 3_600_000);
    expect(session!.expires * 1000 - Date.now()).toBeLessThanOrEqual(12 * 3_600_000);

    await page.goto(`${base}/`);
    expect(await page.getByRole('link', { name: SITES.private }).count()).toBe(1);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${base}/_/login?next=%2F`);
    expect((await page.goto(`${base}/${SITES.private}`))!.status()).toBe(404);
    await context.close();
  });

  test('a password page: the form, the wrong-password error, then the page', async ({
    base,
    seeded,
    visitor,
  }) => {
    const { context, page } = await visitor();
    await page.goto(`${base}/${SITES.locked}/countries`);
    await page.getByLabel('Password').fill('wrong');
    const [wrong] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Open' }).click(),
    ]);
    expect(wrong.status()).toBe(401);
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Wrong password.');
    await page.getByLabel('Password').fill(SITE_PASSWORD);
    await Promise.all([
      page.waitForURL(`${base}/${SITES.locked}/countries`),
      page.getByRole('button', { name: 'Open' }).click(),
    ]);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('locked.example Countries');
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({
      name: `tg_unlock_w${seeded.siteIds.locked}`,
      path: '/locked.example',
      httpOnly: true,
    });
    await context.close();

    const other = await visitor();
    await other.page.goto(`${base}/${SITES.locked}`);
    expect(await other.page.getByLabel('Password').count()).toBe(1);
    await other.context.close();
  });
});

const CHROME =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';

test(
  'a page on another origin embeds the tracking script; its visit shows on the statistics page',
  SETUP,
  async ({ base, browser, visitor }) => {
    // The tracked site: 127.0.0.1 on a port of its own, so the script and its beacon are cross-origin.
    const site = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>Shop</title><script src="${base}/js/script.js"></script><h1>Shop</h1>`);
    });
    site.listen(0, '127.0.0.1');
    await once(site, 'listening');
    const siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    const created = await send(`${base}/api/v1/websites`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'url=127.0.0.1&privacy=0',
    });
    expect(created.status).toBe(201);
    try {
      // A browser's user agent (HeadlessChrome is a bot, and websites exclude bots by default).
      const shopper = await browser.newContext({ userAgent: CHROME });
      await (await shopper.newPage()).goto(`${siteUrl}/checkout?utm_campaign=autumn`);
      await waitFor(
        async () => (await send(`${base}/127.0.0.1/realtime`)).text,
        (html) => html.includes('<strong id="recent-pageviews">1</strong>'),
        { what: 'the visit on the realtime page' },
      );
      await shopper.close();

      const { context, page } = await visitor();
      await page.goto(`${base}/127.0.0.1`);
      expect(await page.locator('#total-visitors').textContent()).toBe('1');
      expect(await page.locator('#total-pageviews').textContent()).toBe('1');
      const pages = page.getByRole('table', { name: 'Top pages' });
      expect(
        await pages.getByRole('cell', { name: '/checkout?utm_campaign=autumn', exact: true }).count(),
      ).toBe(1);
      await page.goto(`${base}/127.0.0.1/campaigns`);
      const rows = await page.locator('#top tbody tr').allTextContents();
      expect(rows.map((r) => r.replace(/\s+/g, ' ').trim())).toEqual(['autumn 1 100.0%']);
      await context.close();
    } finally {
      site.closeAllConnections();
      site.close();
    }
  },
);

describe('report pages', SETUP, () => {
  test('a public report: result, score, the checks, the payload as text', async ({
    analyzer,
    seeded,
    visitor,
  }) => {
    const { context, page } = await visitor();
    const response = await page.goto(`${analyzer}/${seeded.reports.public}`);
    expect(response!.status()).toBe(200);
    expect(await page.locator('#checks tbody tr').count()).toBe(18);
    const title = page.locator('tr[data-check="title"] td.value').first();
    expect(await title.textContent()).toBe(XSS);
    expect(await page.title()).not.toBe('pwned');
    expect(await page.locator('main img').count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'report.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(SHOTS, 'report-mobile.png') });
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await context.close();
  });

  test('a private report: 404, then shown to its owner, whose list shows which pages are public', async ({
    analyzer,
    seeded,
    visitor,
  }) => {
    const { context, page } = await visitor();
    expect((await page.goto(`${analyzer}/${seeded.reports.private}`))!.status()).toBe(404);
    await signIn(page, analyzer, ALICE_KEY, '/');
    const rows = await page.locator('#reports tbody tr').allTextContents();
    expect(rows.map((r) => r.replace(/\s+/g, ' ').trim().split(' ').at(-2))).toEqual([
      'Password',
      'Private',
      'Public',
    ]);
    expect((await page.goto(`${analyzer}/${seeded.reports.private}`))!.status()).toBe(200);
    await context.close();
  });

  test('a password report', async ({ analyzer, seeded, visitor }) => {
    const { context, page } = await visitor();
    await page.goto(`${analyzer}/${seeded.reports.locked}`);
    await page.getByLabel('Password').fill('nope');
    await page.getByRole('button', { name: 'Open' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Wrong password.');
    await page.getByLabel('Password').fill(REPORT_PASSWORD);
    await Promise.all([
      page.waitForURL(`${analyzer}/${seeded.reports.locked}`),
      page.getByRole('button', { name: 'Open' }).click(),
    ]);
    expect(await page.locator('#checks tbody tr').count()).toBe(18);
    await context.close();
  });
});
