// The widget in a real browser: a page from another origin calls the shipped config's widget
// endpoints through the gateway (embedded widget service, SQLite, a real redis-server), sends
// leads until 429, and its script reads Retry-After and X-RateLimit-Reset. Headless Chromium
// (Debian's package) enforces CORS exactly as it would on a customer's site.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { DEFAULT_CONFIG } from '../helpers/default-config.js';
import { dataDirWithWorkspaces, embeddedEnv } from '../helpers/embedded.js';
import { test as serversTest, type GatewayLauncher } from '../helpers/fixtures.js';
import { capturingLogger } from '../helpers/log-capture.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LEADS_MESSAGE = 'Too many lead submissions. Please wait before trying again.';

/**
 * The widget's script, served by the customer's site. `call` reports what a script can see of a
 * response: the headers CORS lets it read (null for the rest), or the error fetch threw.
 */
const WIDGET_JS = `
window.widget = {
  async call(gateway, path, { token, body, contentType = 'application/json', mode } = {}) {
    const headers = {};
    if (contentType) headers['Content-Type'] = contentType;
    if (token) headers['Authorization'] = 'Bearer ' + token;
    const sentAt = Date.now();
    let res;
    try {
      res = await fetch(gateway + path, { method: 'POST', headers, body: JSON.stringify(body), mode });
    } catch (err) {
      return { error: err.name + ': ' + err.message };
    }
    const read = (name) => res.headers.get(name);
    return {
      type: res.type,
      status: res.status,
      sentAt,
      at: Date.now(),
      limit: read('X-RateLimit-Limit'),
      remaining: read('X-RateLimit-Remaining'),
      reset: read('X-RateLimit-Reset'),
      retryAfter: read('Retry-After'),
      requestId: read('X-Request-Id'),
      date: read('Date'),
      body: await res.text(),
    };
  },
  /** Starts a session, then sends leads until the gateway says 429 (at most 50). */
  async leadsUntilLimited(gateway, workspace) {
    const init = await this.call(gateway, '/api/v1/widget/init', { body: { workspace } });
    if (init.status !== 200) return { init, leads: [] };
    const token = JSON.parse(init.body).token;
    const leads = [];
    while (leads.length < 50) {
      const lead = await this.call(gateway, '/api/v1/widget/leads', {
        token,
        body: { name: 'Ann', email: 'ann@example.com', consent: true },
      });
      leads.push(lead);
      if (lead.status !== 201) break;
    }
    return { init, leads };
  },
};
`;

/** What the page's script saw of one response. */
interface Seen {
  readonly error?: string;
  readonly type: string;
  readonly status: number;
  readonly sentAt: number;
  readonly at: number;
  readonly limit: string | null;
  readonly remaining: string | null;
  readonly reset: string | null;
  readonly retryAfter: string | null;
  readonly requestId: string | null;
  readonly date: string | null;
  readonly body: string;
}

interface AccessLine {
  readonly reqId: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly route?: string;
}

/** A customer's site: a page that loads the widget's script. */
async function startSite(): Promise<Server> {
  const site = createServer((req, res) => {
    if (req.url === '/widget.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(WIDGET_JS);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><meta charset="utf-8"><title>Shop</title><script src="/widget.js"></script>');
  });
  site.listen(0, '127.0.0.1');
  await once(site, 'listening');
  return site;
}

/** The shipped config with its embedded services; `redisDb` keeps each gateway's counters apart. */
async function startWidgetGateway(
  gateways: GatewayLauncher,
  redisUrl: string,
  redisDb: number,
  extra: Record<string, string> = {},
) {
  const { logger, lines } = capturingLogger('info');
  const env = embeddedEnv(dataDirWithWorkspaces('acme'), { REDIS_URL: `${redisUrl}/${redisDb}`, ...extra });
  const gateway = await gateways.start(DEFAULT_CONFIG, env, { logger });
  const accessLog = () =>
    lines.filter((l): l is Record<string, unknown> & AccessLine => 'reqId' in l && 'status' in l);
  return { gateway, accessLog };
}

/**
 * The file's servers, each started when a test first names it:
 * - `site`: the customer's site as http://localhost:<port> (`shopOrigin`), and the same server as
 *   http://127.0.0.1:<port> (`otherOrigin`, another origin);
 * - `browser`: headless Chromium (without one each test fails: none is skipped); `openPage` opens the site in it;
 * - `anyOrigin`, `listedOrigins`: a widget gateway open to any origin, and one open to the shop's alone.
 */
const test = serversTest
  .extend('site', { scope: 'file' }, async ({}, { onCleanup }) => {
    const site = await startSite();
    onCleanup(async () => {
      site.closeAllConnections();
      await new Promise((r) => site.close(r));
    });
    const port = (site.address() as AddressInfo).port;
    return { shopOrigin: `http://localhost:${port}`, otherOrigin: `http://127.0.0.1:${port}` };
  })
  .extend('browser', { scope: 'file' }, async ({}, { onCleanup }): Promise<Browser> => {
    const browser = await launchChromium();
    onCleanup(() => browser.close());
    return browser;
  })
  .extend('openPage', { scope: 'file' }, ({ browser }) => async (origin: string): Promise<Page> => {
    const page = await browser.newPage();
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => 'widget' in globalThis);
    return page;
  })
  .extend('anyOrigin', { scope: 'file' }, ({ redis, gateways }) => startWidgetGateway(gateways, redis.url, 0))
  .extend('listedOrigins', { scope: 'file' }, ({ redis, gateways, site }) =>
    startWidgetGateway(gateways, redis.url, 1, { WIDGET_CORS_ORIGINS: site.shopOrigin }),
  );

/** The widget script's API, as the page's global `widget`. */
interface WidgetGlobal {
  readonly widget: {
    call(gateway: string, path: string, options: object): Promise<Seen>;
    leadsUntilLimited(gateway: string, workspace: string): Promise<{ init: Seen; leads: Seen[] }>;
  };
}

/** Has the page's script call init with `options` (see WIDGET_JS). */
function callInit(page: Page, gateway: string, options: object): Promise<Seen> {
  return page.evaluate(
    ([gw, opts]) => (globalThis as unknown as WidgetGlobal).widget.call(gw, '/api/v1/widget/init', opts),
    [gateway, options] as const,
  );
}

describe('the shipped config: widget routes open to any origin', () => {
  test('init, leads until 429, and the script reads Retry-After and X-RateLimit-Reset', async ({
    anyOrigin: { gateway, accessLog },
    openPage,
    site,
  }) => {
    const page = await openPage(site.shopOrigin);
    const wire: { url: string; status: number; headers: Record<string, string> }[] = [];
    page.on('response', (response) => {
      if (response.url().startsWith(gateway.url())) {
        void response
          .allHeaders()
          .then((headers) => wire.push({ url: response.url(), status: response.status(), headers }));
      }
    });
    const { init, leads } = await page.evaluate(
      (gw) => (globalThis as unknown as WidgetGlobal).widget.leadsUntilLimited(gw, 'acme'),
      gateway.url(),
    );

    expect(init).toMatchObject({
      type: 'cors',
      status: 200,
      limit: '1000',
      remaining: '999',
      retryAfter: null,
      // Only the exposed headers are readable: Date is on the wire, but not for this script.
      date: null,
    });
    expect(init.requestId).toMatch(UUID);
    expect(JSON.parse(init.body)).toMatchObject({ token_type: 'Bearer', resumed: false });

    expect(leads).toHaveLength(31);
    expect(leads.slice(0, 30).map((l) => [l.type, l.status, l.limit, l.remaining, l.retryAfter])).toEqual(
      Array.from({ length: 30 }, (_, i) => ['cors', 201, '30', String(29 - i), null]),
    );
    const limited = leads[30]!;
    expect(limited).toMatchObject({ type: 'cors', status: 429, limit: '30', remaining: '0', date: null });
    expect(JSON.parse(limited.body)).toEqual({ error: { code: 'rate_limited', message: LEADS_MESSAGE } });
    const retryAfter = Number(limited.retryAfter);
    const reset = Number(limited.reset);
    expect(limited.retryAfter).toMatch(/^\d+$/);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Retry-After counts down to X-RateLimit-Reset from the moment the gateway answered.
    expect(reset - retryAfter).toBeGreaterThanOrEqual(Math.floor(limited.sentAt / 1000));
    expect(reset - retryAfter).toBeLessThanOrEqual(Math.ceil(limited.at / 1000));
    // The window the first lead opened is the one that resets.
    expect(Math.abs(reset - Number(leads[0]!.reset))).toBeLessThanOrEqual(1);

    // What the script read is what the gateway sent.
    await expect.poll(() => wire.length).toBe(32);
    const wired429 = wire.find((w) => w.status === 429)!;
    expect(wired429.headers).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-expose-headers':
        'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Request-Id, RateLimit, RateLimit-Policy',
      vary: 'Origin',
      'retry-after': limited.retryAfter,
      'x-ratelimit-reset': limited.reset,
      'x-request-id': limited.requestId,
    });
    expect(wired429.headers['date']).toMatch(/ GMT$/);

    // The browser sent preflights, the gateway answered them, and none was counted (the
    // remaining counts above are unbroken). Chromium caches the answer for its max-age (10m).
    const log = accessLog();
    const preflights = log.filter((l) => l.method === 'OPTIONS').map((l) => [l.path, l.status, l.route]);
    expect(preflights).toEqual([
      ['/api/v1/widget/init', 204, 'widget-init'],
      ['/api/v1/widget/leads', 204, 'widget-leads'],
    ]);
    expect(log.filter((l) => l.method === 'POST').map((l) => l.status)).toEqual([
      200,
      ...Array(30).fill(201),
      429,
    ]);
    expect(log.find((l) => l.status === 429)!.reqId).toBe(limited.requestId);
    await page.close();
  }, 90_000);
});

describe('a list of origins (WIDGET_CORS_ORIGINS)', () => {
  test('another origin’s script gets nothing, but what it sent was counted', async ({
    listedOrigins: { gateway, accessLog },
    openPage,
    site,
  }) => {
    const intruder = await openPage(site.otherOrigin);
    const call = (options: object) => callInit(intruder, gateway.url(), options);
    // A JSON request is preflighted: refused, so the request itself is never sent.
    expect(await call({ body: { workspace: 'acme' } })).toEqual({ error: 'TypeError: Failed to fetch' });
    // A "simple" request needs no preflight: it is sent and counted, but the script cannot read the answer.
    expect(await call({ body: { workspace: 'acme' }, contentType: 'text/plain' })).toEqual({
      error: 'TypeError: Failed to fetch',
    });
    // no-cors: the browser sends it and hands the script an opaque response.
    expect(
      await call({ body: { workspace: 'acme' }, contentType: 'text/plain', mode: 'no-cors' }),
    ).toMatchObject({
      type: 'opaque',
      status: 0,
      remaining: null,
      requestId: null,
      body: '',
    });
    await intruder.close();

    const shop = await openPage(site.shopOrigin);
    const ok = await callInit(shop, gateway.url(), { body: { workspace: 'acme' } });
    // The same browser (address and user agent): the intruder's two sent requests were counted, its preflight not.
    expect(ok).toMatchObject({ type: 'cors', status: 200, limit: '1000', remaining: '997' });
    await shop.close();

    const log = accessLog().map((l) => [l.method, l.path, l.status]);
    expect(log).toEqual([
      ['OPTIONS', '/api/v1/widget/init', 403],
      ['POST', '/api/v1/widget/init', 422],
      ['POST', '/api/v1/widget/init', 422],
      ['OPTIONS', '/api/v1/widget/init', 204],
      ['POST', '/api/v1/widget/init', 200],
    ]);
  }, 90_000);
});
