import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext } from 'playwright-core';
import { expect } from 'vitest';
import { dayOf } from '../../../../src/services/websites/analytics/days.js';
import { ALICE_KEY } from '../../../helpers/embedded.js';
import { chromium, embeddedTest } from '../../../helpers/fixtures.js';
import { send } from '../../../helpers/gateway.js';
import { waitFor } from '../../../helpers/wait.js';

/**
 * The tracking script in a real browser (headless Chromium): a page on the tracked site (one origin)
 * embeds /js/script.js from the gateway (another origin); its beacons reach the collector and show
 * in the stats API. navigator.sendBeacon is wrapped to record each call, so Do-Not-Track is proven
 * by the calls the script made when the page loaded, not by waiting.
 */

const CHROME =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';

const test = embeddedTest()
  /** The tracked site (another origin than the gateway's): a page that embeds the tracking script. */
  .extend('siteUrl', { scope: 'file' }, async ({ gateway }, { onCleanup }) => {
    const site = createServer((req, res) => {
      const dnt = req.url!.includes('dnt');
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>t</title>
<script src="${gateway.url()}/js/script.js"${dnt ? ' data-dnt="true"' : ''}></script>`);
    });
    site.listen(0, '127.0.0.1');
    await once(site, 'listening');
    onCleanup(() => new Promise<void>((resolve) => site.close(() => resolve())));
    return `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  })
  /** The stats API of the site's website (Alice's), for one dimension today. */
  .extend('stats', { scope: 'file' }, async ({ gateway }) => {
    const created = await send(`${gateway.url()}/api/v1/websites`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'url=127.0.0.1',
    });
    expect(created.status).toBe(201);
    const websiteId = (created.json() as { data: { id: number } }).data.id;
    return async (name: string) => {
      const today = dayOf(Date.now());
      const reply = await send(`${gateway.url()}/api/v1/stats/${websiteId}?name=${name}&from=${today}`, {
        headers: { authorization: `Bearer ${ALICE_KEY}` },
      });
      return (reply.json() as { data: { value: string; count: number }[] }).data;
    };
  })
  .extend('browser', { scope: 'file' }, chromium);

async function context(browser: Browser, doNotTrack: boolean): Promise<BrowserContext> {
  const ctx = await browser.newContext({ userAgent: CHROME });
  // Runs in the page before its scripts (a string: this file is typed without the DOM).
  await ctx.addInitScript({
    content: `
      ${doNotTrack ? "Object.defineProperty(Navigator.prototype, 'doNotTrack', { get: () => '1' });" : ''}
      const original = navigator.sendBeacon.bind(navigator);
      window.beacons = [];
      navigator.sendBeacon = (url, data) => {
        window.beacons.push(String(data));
        return original(url, data);
      };`,
  });
  return ctx;
}

test(
  'a page view by sendBeacon, then pa.track: both reach the collector across origins',
  { timeout: 120_000 }, // with the file's set-up: a gateway, a site, a browser
  async ({ browser, siteUrl, stats }) => {
    const ctx = await context(browser, false);
    try {
      const tab = await ctx.newPage();
      await tab.goto(`${siteUrl}/landing?utm_campaign=launch`);
      const beacons = await tab.evaluate<string[]>('window.beacons');
      expect(beacons).toHaveLength(1);
      expect(new URLSearchParams(beacons[0]).get('page')).toBe(`${siteUrl}/landing?utm_campaign=launch`);
      await waitFor(
        () => stats('pages'),
        (rows) => rows.length > 0,
        { what: 'the page view' },
      );
      expect(await stats('pages')).toEqual([{ value: '/landing?utm_campaign=launch', count: 1 }]);
      expect(await stats('campaigns')).toEqual([{ value: 'launch', count: 1 }]);
      expect(await stats('browsers')).toEqual([{ value: 'Chrome', count: 1 }]);

      await tab.evaluate("pa.track('signup', 5, 'EUR')");
      await waitFor(
        () => stats('events'),
        (rows) => rows.length > 0,
        { what: 'the event' },
      );
      expect(await stats('events')).toEqual([
        { value: 'signup', count: 1, values: [{ unit: 'EUR', count: 1, total: 5 }] },
      ]);
    } finally {
      await ctx.close();
    }
  },
);

test(
  'data-dnt="true" with Do-Not-Track on: nothing is sent; without data-dnt it is',
  { timeout: 120_000 }, // with the file's set-up: a gateway, a site, a browser
  async ({ browser, siteUrl }) => {
    const ctx = await context(browser, true);
    try {
      const tab = await ctx.newPage();
      await tab.goto(`${siteUrl}/dnt`);
      expect(await tab.evaluate<string[]>('window.beacons')).toEqual([]);
      await tab.goto(`${siteUrl}/plain`);
      expect(await tab.evaluate<string[]>('window.beacons')).toHaveLength(1);
    } finally {
      await ctx.close();
    }
  },
);
