// The owner's inbox page in headless Chromium, through the shipped config's gateway: a visitor on
// a shop's page (another origin) writes through the widget endpoints, the owner answers on the
// inbox page, and the visitor's widget, polling with `after`, shows the reply.
import { once } from 'node:events';
import { createServer } from 'node:http';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import { launchChromium } from '../../helpers/browser.js';
import { ALICE_KEY } from '../../helpers/embedded.js';
import { shopTest } from '../../helpers/widget-shop.js';

/** Where the screenshots go: docs/images with SCREENSHOTS=docs, else a temp dir. */
const SHOTS = process.env['SCREENSHOTS'] === 'docs' ? 'docs/images' : join(tmpdir(), 'tollgate-shots');

/** A shop's page with a minimal widget: init, send, and a poll of the new messages (`after`). */
const shopPage = (gateway: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Shop</title></head>
<body>
  <ol id="log"></ol>
  <form id="send"><label>Message <input name="body" required></label><button>Send</button></form>
  <script>
    const api = ${JSON.stringify(`${gateway}/api/v1/widget`)};
    let token, last = 0;
    const headers = () => ({ authorization: 'Bearer ' + token, 'content-type': 'application/json' });
    async function poll() {
      const res = await fetch(api + '/conversation/messages?after=' + last, { headers: headers() });
      for (const m of (await res.json()).messages) {
        const li = document.createElement('li');
        li.className = m.sender;
        li.textContent = m.body;
        document.getElementById('log').append(li);
        last = m.id;
      }
      setTimeout(poll, 200);
    }
    document.getElementById('send').addEventListener('submit', async (e) => {
      e.preventDefault();
      const input = e.target.elements.body;
      await fetch(api + '/messages', { method: 'POST', headers: headers(), body: JSON.stringify({ body: input.value }) });
      input.value = '';
    });
    fetch(api + '/init', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workspace: 'acme', page_url: location.href }),
    }).then((r) => r.json()).then((session) => {
      token = session.token;
      document.body.dataset.ready = 'true';
      poll();
    });
  </script>
</body></html>`;

const test = shopTest
  .extend('browser', { scope: 'file' }, async ({}, { onCleanup }) => {
    const browser: Browser = await launchChromium();
    onCleanup(() => browser.close());
    return browser;
  })
  .extend('shopOrigin', { scope: 'file' }, async ({ shop }, { onCleanup }) => {
    const server = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(shopPage(shop.url));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

async function signIn(page: Page, origin: string, next: string): Promise<void> {
  await page.goto(`${origin}${next}`);
  // Not signed in: the inbox sends the owner to sign in, and back.
  expect(new URL(page.url()).pathname).toBe('/_/login');
  await page.getByLabel('API key').fill(ALICE_KEY);
  await Promise.all([
    page.waitForURL(`${origin}${next}`),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
}

describe('the inbox page', () => {
  test(
    'a visitor writes on the shop, the owner answers on the inbox page, the widget shows the reply',
    { timeout: 90_000 },
    async ({ browser, shop, shopOrigin }) => {
      const errors: string[] = [];
      const visitorContext = await browser.newContext();
      const visitor = await visitorContext.newPage();
      visitor.on('pageerror', (err) => errors.push(err.message));

      await visitor.goto(shopOrigin);
      await visitor.locator('body[data-ready="true"]').waitFor();
      await visitor.getByLabel('Message').fill('Do you ship to Norway?');
      await visitor.getByRole('button', { name: 'Send' }).click();
      await visitor.locator('#log li.visitor', { hasText: 'Do you ship to Norway?' }).waitFor();

      const ownerContext = await browser.newContext();
      const owner = await ownerContext.newPage();
      owner.on('pageerror', (err) => errors.push(err.message));
      await signIn(owner, shop.url, '/_/inbox');
      await Promise.all([
        owner.waitForURL(`${shop.url}/_/inbox/acme`),
        owner.getByRole('link', { name: 'acme', exact: true }).click(),
      ]);
      const row = owner.locator('#conversations tbody tr', { hasText: 'Do you ship to Norway?' });
      expect(await row.locator('td.unread').textContent()).toBe('1');
      await Promise.all([
        owner.waitForURL(/\/_\/inbox\/acme\/[0-9a-f-]{36}$/),
        row.getByRole('link').click(),
      ]);
      const conversation = new URL(owner.url()).pathname.split('/').at(-1)!;
      expect(await owner.locator('#messages li.from-visitor p').allTextContents()).toEqual([
        'Do you ship to Norway?',
      ]);

      await owner.getByLabel('Reply').fill('Yes, within 3 days.');
      await Promise.all([
        owner.waitForURL(/#reply$/),
        owner.getByRole('button', { name: 'Send reply' }).click(),
      ]);
      expect(await owner.locator('#messages li.from-agent p').allTextContents()).toEqual([
        'Yes, within 3 days.',
      ]);
      mkdirSync(SHOTS, { recursive: true });
      await owner.screenshot({ path: join(SHOTS, 'inbox.png'), fullPage: true });
      // No horizontal scrolling on a phone.
      await owner.setViewportSize({ width: 390, height: 844 });
      expect(await owner.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      await owner.setViewportSize({ width: 1200, height: 900 });

      // The visitor's widget, polling with `after`, shows the reply once.
      await visitor.locator('#log li.agent', { hasText: 'Yes, within 3 days.' }).waitFor();
      expect(await visitor.locator('#log li').allTextContents()).toEqual([
        'Do you ship to Norway?',
        'Yes, within 3 days.',
      ]);

      // Read on the page: the list shows nothing unread, and the reply as the last message.
      await owner.goto(`${shop.url}/_/inbox/acme`);
      const read = owner.locator(`#conversations tr[data-conversation="${conversation}"]`);
      expect(await read.locator('td.unread').textContent()).toBe('0');
      expect((await read.textContent())!.replace(/\s+/g, ' ')).toContain('agent: Yes, within 3 days.');
      expect(errors).toEqual([]);
      await visitorContext.close();
      await ownerContext.close();
    },
  );

  test(
    'an empty reply is refused on the page; another owner sees a 404 page',
    { timeout: 90_000 },
    async ({ browser, shop }) => {
      const visitor = await shop.visitor();
      await visitor.say('hello');
      const context = await browser.newContext();
      const page = await context.newPage();
      const path = `/_/inbox/acme/${visitor.sessionId}`;
      await signIn(page, shop.url, path);
      await page.getByLabel('Reply').fill('   ');
      // The browser's own check passes (spaces); the service trims and refuses.
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/reply')),
        page.getByRole('button', { name: 'Send reply' }).click(),
      ]);
      expect(response.status()).toBe(422);
      await page.getByRole('alert').waitFor();
      expect(await page.getByRole('alert').textContent()).toBe('Write a reply first.');
      const missing = await page.goto(`${shop.url}/_/inbox/globex`);
      expect(missing!.status()).toBe(404);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Page not found');
      await context.close();
    },
  );
});
