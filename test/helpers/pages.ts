import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import type { Hit } from '../../src/services/websites/analytics/aggregate.js';
import { HitRecorder } from '../../src/services/websites/analytics/recorder.js';
import { ALICE_KEY } from './embedded.js';
import { send } from './gateway.js';

/** Fixtures of the statistics and report pages' tests: websites, reports and visits of user Alice. */

/** Shown as text wherever it appears: a page path, a referrer, a report's title. */
export const XSS = `<img src=x onerror="document.title='pwned'">`;

export const SITES = {
  public: 'public.example',
  private: 'private.example',
  locked: 'locked.example',
} as const;
export const SITE_PASSWORD = 'hunter2 is fine';
export const REPORT_PASSWORD = 'report pass';

export interface Seeded {
  readonly siteIds: Record<keyof typeof SITES, number>;
  /** Report ids by privacy. */
  readonly reports: { readonly public: number; readonly private: number; readonly locked: number };
}

async function api(gateway: string, host: string, path: string, form: Record<string, string>) {
  const reply = await send(`${gateway}${path}`, {
    method: 'POST',
    headers: {
      host,
      authorization: `Bearer ${ALICE_KEY}`,
      accept: 'application/json',
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams(form).toString(),
  });
  expect(reply.status).toBe(201);
  return (reply.json() as { data: { id: number } }).data.id;
}

/** A page for the analyser whose title is the XSS payload. */
async function xssPage(): Promise<Server> {
  const server = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${XSS.replace(/</g, '&lt;')}</title></head><body><h1>Hi</h1></body></html>`,
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

/** A pageview of a new visitor (or an event), at `atMs`. */
export function hit(atMs: number, page: string, extra: Partial<Hit> = {}): Hit {
  return {
    atMs,
    page,
    visitor: true,
    referrer: 'news.example',
    searchEngine: null,
    socialNetwork: null,
    campaign: null,
    country: 'DE',
    language: 'de',
    browser: 'Chrome',
    operatingSystem: 'Linux',
    device: 'desktop',
    screenResolution: '1920x1080',
    event: null,
    ...extra,
  };
}

/**
 * Creates the websites and reports through the gateway's APIs, and records visits of the public
 * site straight into the analytics tables of the same SQLite file (HitRecorder, as the collector does).
 */
export async function seed(gateway: string, dataDir: string, nowMs: number): Promise<Seeded> {
  const site = (url: string, privacy: string, password?: string) =>
    api(gateway, '127.0.0.1', '/api/v1/websites', { url, privacy, ...(password ? { password } : {}) });
  const siteIds = {
    public: await site(SITES.public, '0'),
    private: await site(SITES.private, '1'),
    locked: await site(SITES.locked, '2', SITE_PASSWORD),
  };
  const server = await xssPage();
  const page = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const report = (privacy: string, password?: string) =>
    api(gateway, 'analyzer.localhost', '/api/v1/reports', {
      url: page,
      privacy,
      ...(password ? { password } : {}),
    });
  const reports = {
    public: await report('0'),
    private: await report('1'),
    locked: await report('2', REPORT_PASSWORD),
  };
  server.closeAllConnections();
  server.close();

  const db = openDatabase(dataDir);
  const recorder = new HitRecorder(db);
  const day = 86_400_000;
  const visits: [number, string, Partial<Hit>][] = [
    [nowMs - 2 * day, '/', {}],
    [nowMs - 2 * day, '/pricing', { referrer: 'search.example', country: 'FR' }],
    [nowMs - 1 * day, '/', { browser: 'Firefox' }],
    [nowMs - 1 * day, `/${XSS}`, { referrer: XSS }],
    [nowMs - 60_000, '/', {}],
    [nowMs - 60_000, '/docs,"quoted"', { visitor: false }],
    [nowMs - 40 * day, '/old', {}],
  ];
  for (const [at, path, extra] of visits) recorder.record(siteIds.public, hit(at, path, extra));
  db.close();
  return { siteIds, reports };
}
