// The browser entry of @tollgate/client (client/dist/index.js, as built) in headless Chromium: a
// page of another origin loads it as an ES module and calls the shipped config's widget endpoints
// (embedded widget service, SQLite, a real redis-server) through the gateway. It proves the entry
// loads without Node built-ins, and that through CORS the client reads Remaining, Reset and
// Retry-After: it pauses at Remaining 0, waits the full Retry-After of a 429, and an abort ends it.
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, expect } from 'vitest';
import type * as Tollgate from '../src/index.js';
import { launchChromium } from '../../test/helpers/browser.js';
import { DEFAULT_CONFIG } from '../../test/helpers/default-config.js';
import { dataDirWithWorkspaces, embeddedEnv } from '../../test/helpers/embedded.js';
import { test } from '../../test/helpers/fixtures.js';

const DIST = fileURLToPath(new URL('../dist/', import.meta.url));

/** A customer's site: a page that imports the client, and the built client under /client/. */
async function startSite(): Promise<Server> {
  const site = createServer((req, res) => {
    const path = req.url ?? '/';
    if (path.startsWith('/client/') && /^[\w/.-]+\.js$/.test(path) && !path.includes('..')) {
      readFile(DIST + path.slice('/client/'.length)).then(
        (js) => {
          res.writeHead(200, { 'content-type': 'text/javascript' });
          res.end(js);
        },
        () => {
          res.writeHead(404);
          res.end();
        },
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<!doctype html><meta charset="utf-8"><title>Shop</title>' +
        '<script type="module">import * as tollgate from "/client/index.js"; window.tollgate = tollgate;</script>',
    );
  });
  site.listen(0, '127.0.0.1');
  await once(site, 'listening');
  return site;
}

let browser: Browser | undefined;
let site: Server | undefined;
afterAll(async () => {
  await browser?.close();
  if (site) {
    site.closeAllConnections();
    await new Promise((r) => site!.close(r));
  }
});

interface PageRun {
  readonly session: { readonly workspace: { readonly name: string }; readonly token_type: string };
  readonly leads: number[];
  readonly pause: { readonly reason: string; readonly ms: number; readonly error: string };
  readonly retry: {
    readonly events: {
      attempt: number;
      delayMs: number;
      willRetry: boolean;
      remaining: number;
      limit: number;
    }[];
    readonly waits: { reason: string; ms: number }[];
    readonly error: string;
  };
}

test('in Chromium: typed widget calls, a pause at Remaining 0, a 429 waited in full, an abort', async ({
  redis,
  gateways,
}) => {
  const gateway = await gateways.start(
    DEFAULT_CONFIG,
    embeddedEnv(dataDirWithWorkspaces('acme'), { REDIS_URL: redis.url }),
  );
  site = await startSite();
  browser = await launchChromium();
  const page = await browser.newPage();
  // localhost: another origin than the gateway's 127.0.0.1, so CORS applies.
  await page.goto(`http://localhost:${(site.address() as AddressInfo).port}/`);
  await page.waitForFunction(() => 'tollgate' in globalThis);

  const run = await page.evaluate(async (gw): Promise<PageRun> => {
    const { TollgateClient } = (globalThis as unknown as { tollgate: typeof Tollgate }).tollgate;
    /** Sleeps that only an abort ends: the page records each wait and then gives up. */
    const sleeps: { ms: number }[] = [];
    const clock = {
      now: () => Date.now(),
      sleep: (ms: number, signal?: AbortSignal) =>
        new Promise<void>((_resolve, reject) => {
          sleeps.push({ ms });
          signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
        }),
    };
    const untilSleeping = async (n: number) => {
      while (sleeps.length < n) await new Promise((r) => setTimeout(r, 10));
    };
    const errorName = (e: unknown) => (e instanceof Error || e instanceof DOMException ? e.name : String(e));

    const client = new TollgateClient({ baseUrl: gw, clock });
    const session = await client.widget.init({ workspace: 'acme' });
    const visitor = client.widget.withToken(session.token);
    const leads: number[] = [];
    const lead = { name: 'Ann', email: 'ann@example.com', consent: true as const };
    for (let i = 0; i < 30; i++) leads.push((await visitor.leads(lead)).lead.id > 0 ? 201 : 0);

    // The 31st lead is not sent: Remaining is 0, so it waits for X-RateLimit-Reset.
    const pauseWaits: { reason: string; ms: number }[] = [];
    const pausing = new TollgateClient({
      baseUrl: gw,
      clock,
      limits: client.http.limits,
      onWait: (e) => pauseWaits.push(e),
    });
    const stop = new AbortController();
    const paused = pausing.widget
      .withToken(session.token)
      .leads(lead, { signal: stop.signal })
      .then(() => 'sent', errorName);
    await untilSleeping(1);
    stop.abort();
    const pause = { ...pauseWaits[0]!, error: await paused };

    // A client that knows nothing sends, gets the 429, and waits its whole Retry-After.
    const events: PageRun['retry']['events'] = [];
    const waits: { reason: string; ms: number }[] = [];
    const fresh = new TollgateClient({
      baseUrl: gw,
      visitorToken: session.token,
      clock,
      onRateLimited: (e) =>
        events.push({
          attempt: e.attempt,
          delayMs: e.delayMs!,
          willRetry: e.willRetry,
          remaining: e.headers.remaining!,
          limit: e.headers.limit!,
        }),
      onWait: (e) => waits.push({ reason: e.reason, ms: e.ms }),
    });
    const cancel = new AbortController();
    const retrying = fresh.widget.leads(lead, { signal: cancel.signal }).then(() => 'sent', errorName);
    await untilSleeping(2);
    cancel.abort();
    return { session, leads, pause, retry: { events, waits, error: await retrying } };
  }, gateway.url());

  expect(run.session).toMatchObject({ workspace: { name: 'acme' }, token_type: 'Bearer' });
  expect(run.leads).toEqual(Array(30).fill(201));
  expect(run.pause.reason).toBe('remaining');
  expect(run.pause.ms).toBeGreaterThan(0);
  // Until X-RateLimit-Reset, whole seconds rounded up: at most 61 s after the window began.
  expect(run.pause.ms).toBeLessThanOrEqual(61_000);
  expect(run.pause.error).toBe('AbortError');
  // Retry-After is whole seconds to the window's end (60, less the seconds the leads took).
  const [event] = run.retry.events;
  expect(run.retry.events).toEqual([
    { attempt: 1, delayMs: event!.delayMs, willRetry: true, remaining: 0, limit: 30 },
  ]);
  expect(event!.delayMs % 1000).toBe(0);
  expect(event!.delayMs).toBeGreaterThanOrEqual(1000);
  expect(event!.delayMs).toBeLessThanOrEqual(60_000);
  // The wait runs from the 429 to Retry-After later (ms counted from a moment after the answer).
  expect(run.retry.waits.map((w) => w.reason)).toEqual(['retry-after']);
  expect(run.retry.waits[0]!.ms).toBeLessThanOrEqual(event!.delayMs);
  expect(run.retry.waits[0]!.ms).toBeGreaterThan(event!.delayMs - 1000);
  expect(run.retry.error).toBe('AbortError');
});
