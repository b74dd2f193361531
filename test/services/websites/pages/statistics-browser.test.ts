// The statistics pages as a site owner reads them, in headless Chromium (Debian's package), through
// the shipped config's gateway with its embedded services and a real SQLite file: the overview's
// order (summary cards with their change, the chart, the top lists), the chart's ticks and legend,
// share bars and country names, event values, realtime counts, and the empty state that turns live.
// It writes the screenshots of docs/images (desktop and phone), so they never go stale.
import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { expect, test as base } from 'vitest';
import type { Gateway } from '../../../../src/runtime/gateway.js';
import { openDatabase } from '../../../../src/db/database.js';
import { HitRecorder } from '../../../../src/services/websites/analytics/recorder.js';
import { launchChromium } from '../../../helpers/browser.js';
import { ALICE_KEY, newDataDir, startEmbeddedGateway } from '../../../helpers/embedded.js';
import { send } from '../../../helpers/gateway.js';
import { pageProblems } from '../../../helpers/page-problems.js';
import { hit } from '../../../helpers/pages.js';

const SHOTS = 'docs/images';
const DAY = 86_400_000;
const SHOP = 'shop.example';
const FRESH = 'fresh.example';
/** An address the shipped country database places in the United Kingdom. */
const UK_ADDRESS = '81.2.69.160';

interface Site {
  readonly gateway: Gateway;
  readonly base: string;
  /** When the visits were recorded (the pages' "now" is the gateway's). */
  readonly nowMs: number;
}

async function createSite(base: string, url: string): Promise<number> {
  const reply = await send(`${base}/api/v1/websites`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${ALICE_KEY}`,
      accept: 'application/json',
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ url, privacy: '0' }).toString(),
  });
  expect(reply.status).toBe(201);
  return (reply.json() as { data: { id: number } }).data.id;
}

/**
 * shop.example over the default 30 days: 4 visitors and 5 pageviews (Germany 2, France 1, United
 * States 1), two purchases of 3950 and 1000 cents and a signup; the 30 days before: 2 visitors,
 * 2 pageviews. fresh.example: nothing yet.
 */
const test = base
  .extend('site', { scope: 'file' }, async ({}, { onCleanup }): Promise<Site> => {
    const dataDir = newDataDir();
    const gateway = await startEmbeddedGateway(dataDir, { TRUSTED_PROXIES: '127.0.0.1' });
    onCleanup(() => gateway.close());
    const url = gateway.url();
    const shop = await createSite(url, SHOP);
    await createSite(url, FRESH);
    const nowMs = Date.now();
    const db = openDatabase(dataDir);
    const recorder = new HitRecorder(db);
    const event = (name: string, value: number | null, unit: string) => ({ event: { name, value, unit } });
    const visits: [number, string, Parameters<typeof hit>[2]][] = [
      [nowMs - 2 * DAY, '/', { country: 'US' }],
      [nowMs - DAY, '/', { browser: 'Firefox' }],
      [nowMs - DAY, '/checkout', event('purchase', 1000, 'cents')],
      [nowMs - 120_000, '/', {}],
      [nowMs - 90_000, '/pricing', { country: 'FR', referrer: 'search.example' }],
      [nowMs - 60_000, '/pricing', { visitor: false, referrer: null }],
      [nowMs - 50_000, '/checkout', event('purchase', 3950, 'cents')],
      [nowMs - 40_000, '/signup', event('signup', null, '')],
      [nowMs - 35 * DAY, '/', {}],
      [nowMs - 40 * DAY, '/', {}],
    ];
    for (const [at, page, extra] of visits.sort((a, b) => a[0] - b[0])) {
      recorder.record(shop, hit(at, page, extra));
    }
    db.close();
    return { gateway, base: url, nowMs };
  })
  .extend('browser', { scope: 'file' }, async ({}, { onCleanup }): Promise<Browser> => {
    const browser = await launchChromium();
    onCleanup(() => browser.close());
    return browser;
  });

async function open(
  browser: Browser,
  url: string,
  width = 1280,
): Promise<{ page: Page; close: () => Promise<void> }> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  const errors = pageProblems(page);
  const response = await page.goto(url);
  expect(response!.status()).toBe(200);
  return {
    page,
    close: async () => {
      expect(errors).toEqual([]);
      await context.close();
    },
  };
}

const text = async (page: Page, selector: string) =>
  ((await page.locator(selector).textContent()) ?? '').replace(/\s+/g, ' ').trim();

const rows = async (page: Page, table: string) =>
  (await page.locator(`${table} tbody tr`).allTextContents()).map((r) => r.replace(/\s+/g, ' ').trim());

test('the overview: summary cards with their change, then the chart, then the top lists', async ({
  site,
  browser,
}) => {
  const { page, close } = await open(browser, `${site.base}/${SHOP}`);
  await expect.poll(() => page.locator('#chart').getAttribute('data-drawn')).toBe('true');
  // The order of the sections.
  const order = await page.locator('main > section').evaluateAll((all) => all.map((s) => s.id));
  expect(order).toEqual(['summary', 'trend', 'top-lists']);
  // The cards, each with its change against the previous 30 days.
  expect(await text(page, '#summary')).toBe(
    'Visitors 4 +100% vs the previous 30 days ' +
      'Pageviews 5 +150% vs the previous 30 days ' +
      'Pageviews per visitor 1.3 +30% vs the previous 30 days',
  );
  expect(await page.locator('#change-visitors').getAttribute('class')).toBe('change up');
  // The legend reads before any hover: the range and its totals.
  const today = new Date(site.nowMs).toISOString().slice(0, 10);
  const from = new Date(site.nowMs - 29 * DAY).toISOString().slice(0, 10);
  expect(await text(page, '#chart-legend')).toBe(`${from} to ${today} Visitors4 Pageviews5`);
  // Whole-number ticks for counts.
  const ticks = (await page.locator('#chart').getAttribute('data-y-ticks'))!.split(',').map(Number);
  expect(ticks).toEqual([0, 1, 2, 3, 4]);
  // ISO dates on the x axis.
  const xLabels = (await page.locator('#chart').getAttribute('data-x-ticks'))!.split(',');
  expect(xLabels.length).toBeGreaterThan(0);
  for (const label of xLabels) expect(label).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  // Hovering a day shows that day's figures in the legend, as an ISO date.
  const box = (await page.locator('#chart .u-over').boundingBox())!;
  await page.mouse.move(box.x + box.width - 1, box.y + box.height / 2);
  await expect.poll(() => text(page, '#chart-legend')).toBe(`${today} Visitors2 Pageviews3`);
  await page.mouse.move(0, 0);
  await expect.poll(() => text(page, '#chart-legend')).toBe(`${from} to ${today} Visitors4 Pageviews5`);
  // Days and hours sit behind toggles.
  expect(await page.locator('#days').getAttribute('open')).toBeNull();
  expect(await page.locator('#hours').getAttribute('open')).toBeNull();
  expect(await page.locator('#hours table').isVisible()).toBe(false);
  await page.locator('#hours summary').click();
  expect(await page.locator('#hours table').isVisible()).toBe(true);
  // Top lists: country names, shares and their bars.
  expect(await rows(page, 'table:has(caption:text-is("Top countries"))')).toEqual([
    'Germany 2 50.0%',
    'France 1 25.0%',
    'United States 1 25.0%',
  ]);
  const bars = await page
    .locator('table:has(caption:text-is("Top countries")) td.bar')
    .evaluateAll((cells) => cells.map((c) => c.className));
  expect(bars).toEqual(['value bar s50', 'value bar s25', 'value bar s25']);
  // The bar is drawn: the cell's background is a gradient.
  const background = await page.evaluate(
    `getComputedStyle(document.querySelector('table.top td.bar.s50')).backgroundImage`,
  );
  expect(background).toBe('linear-gradient(to right, rgb(221, 232, 251) 50%, rgba(0, 0, 0, 0) 50%)');
  // Event values summed per name and unit.
  expect(await rows(page, 'table:has(caption:text-is("Top events"))')).toEqual([
    'purchase 2 4,950 cents 66.7%',
    'signup 1 33.3%',
  ]);
  // Presets, the current one marked.
  const presets = page.getByRole('navigation', { name: 'Date presets' });
  expect(await presets.getByRole('link').allTextContents()).toEqual([
    'Today',
    '7 days',
    '30 days',
    'This month',
    '12 months',
  ]);
  expect(await presets.locator('a[aria-current="true"]').textContent()).toBe('30 days');

  mkdirSync(SHOTS, { recursive: true });
  await page.locator('#hours summary').click();
  await page.screenshot({ path: `${SHOTS}/statistics.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${SHOTS}/statistics-mobile.png` });
  // No horizontal scrolling on a phone.
  expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
  await close();
});

test('the chart draws both series when visitors equal pageviews', async ({ site, browser }) => {
  // From three days ago to yesterday: 0, 1 and 1 visitors, each a pageview.
  const day = (ago: number) => new Date(site.nowMs - ago * DAY).toISOString().slice(0, 10);
  const { page, close } = await open(browser, `${site.base}/${SHOP}?from=${day(3)}&to=${day(1)}`);
  await expect.poll(() => page.locator('#chart').getAttribute('data-drawn')).toBe('true');
  expect(await text(page, '#chart-legend')).toBe(`${day(3)} to ${day(1)} Visitors2 Pageviews2`);
  expect((await page.locator('#chart').getAttribute('data-y-ticks'))!.split(',').map(Number)).toEqual([
    0, 1, 2,
  ]);
  // Pixels of each series' colour on the canvas: the dashed pageviews line leaves the visitors line showing.
  const counts = (await page.evaluate(`(() => {
    const canvas = document.querySelector('#chart canvas');
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    const near = (i, [r, g, b]) =>
      data[i + 3] > 200 && Math.abs(data[i] - r) < 24 && Math.abs(data[i + 1] - g) < 24 && Math.abs(data[i + 2] - b) < 24;
    let blue = 0;
    let red = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (near(i, [0x0b, 0x57, 0xd0])) blue++;
      if (near(i, [0xb3, 0x26, 0x1e])) red++;
    }
    return { blue, red };
  })()`)) as { blue: number; red: number };
  expect(counts.blue).toBeGreaterThan(0);
  expect(counts.red).toBeGreaterThan(0);
  await close();
});

test('event values in the events page, its CSV and the stats API', async ({ site, browser }) => {
  const { page, close } = await open(browser, `${site.base}/${SHOP}/events`);
  expect(await rows(page, '#top')).toEqual(['purchase 2 4,950 cents 66.7%', 'signup 1 33.3%']);
  expect(await page.locator('#top thead th').allTextContents()).toEqual([
    'Event',
    'Count',
    'Values',
    'Share',
  ]);
  await close();
  const csv = await send(`${site.base}/${SHOP}/events.csv`);
  expect(csv.status).toBe(200);
  expect(csv.text).toBe('value,count,share,values\r\npurchase,2,66.7%,4950 cents\r\nsignup,1,33.3%,\r\n');
  const api = await send(`${site.base}/api/v1/stats/1?name=events`, {
    headers: { authorization: `Bearer ${ALICE_KEY}`, accept: 'application/json' },
  });
  expect(api.status).toBe(200);
  expect((api.json() as { data: unknown }).data).toEqual([
    { value: 'purchase', count: 2, values: [{ unit: 'cents', count: 2, total: 4950 }] },
    { value: 'signup', count: 1, values: [] },
  ]);
});

test('realtime counts visitors and pageviews apart, every row with its country, no mid-word breaks', async ({
  site,
  browser,
}) => {
  const { page, close } = await open(browser, `${site.base}/${SHOP}/realtime`);
  expect(await text(page, '#recent-summary')).toBe(
    '2 visitors and 3 pageviews in the last 30 minutes (UTC times).',
  );
  expect(await page.locator('#recent-visitors').textContent()).toBe('2');
  expect(await page.locator('#recent-pageviews').textContent()).toBe('3');
  const countries = await page.locator('#recent td[data-label="Country"]').allTextContents();
  expect(countries.map((c) => c.trim())).toEqual(['Germany', 'France', 'Germany']);
  // At 1280 px every short value (time, country, browser, system, device) is on one line.
  // A cell whose text spans more than one line has client rects at more than one height.
  const broken = (await page.evaluate(`[...document.querySelectorAll('#recent .short')]
      .filter((cell) => {
        const range = document.createRange();
        range.selectNodeContents(cell);
        return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1;
      })
      .map((cell) => cell.textContent)`)) as string[];
  expect(broken).toEqual([]);
  await close();
});

test('the empty state: the snippet to paste, then live when the first pageview arrives', async ({
  site,
  browser,
}) => {
  const { page, close } = await open(browser, `${site.base}/${FRESH}`);
  expect(await text(page, '#waiting-title')).toBe('Waiting for the first pageview');
  expect(await page.locator('#snippet').textContent()).toBe(
    '<script src="http://localhost:8080/js/script.js" defer></script>',
  );
  expect(await text(page, '#waiting-status')).toBe('No pageview yet. This page checks every few seconds.');
  expect(await page.locator('#summary').count()).toBe(0);
  // A first pageview through the collector: a new visitor, then a second page of the same visit.
  const beacon = (referrer: string) =>
    send(`${site.base}/api/event`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'user-agent':
          'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36',
        'x-forwarded-for': UK_ADDRESS,
      },
      body: new URLSearchParams({ page: `https://${FRESH}/welcome`, referrer }).toString(),
    });
  expect((await beacon('https://news.example/')).status).toBe(200);
  expect((await beacon(`https://${FRESH}/welcome`)).status).toBe(200);
  await expect
    .poll(() => page.locator('#waiting').getAttribute('data-state'), { timeout: 20_000 })
    .toBe('live');
  expect(await text(page, '#waiting-status')).toBe(
    'Live: the first pageview arrived (1 visitor, 2 pageviews in the last 30 minutes). Show the statistics',
  );
  await Promise.all([
    page.waitForURL(`${site.base}/${FRESH}`),
    page.getByRole('link', { name: 'Show the statistics' }).click(),
  ]);
  expect(await page.locator('#total-visitors').textContent()).toBe('1');
  // The realtime rows: both pageviews with their country, one of them a visitor.
  await page.goto(`${site.base}/${FRESH}/realtime`);
  expect(await text(page, '#recent-summary')).toBe(
    '1 visitor and 2 pageviews in the last 30 minutes (UTC times).',
  );
  const countries = await page.locator('#recent td[data-label="Country"]').allTextContents();
  expect(countries.map((c) => c.trim())).toEqual(['United Kingdom', 'United Kingdom']);
  await close();
});
