import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { test as base } from '../../helpers/fixtures.js';
import { DEFAULT_CONFIG } from '../../helpers/default-config.js';
import { ALICE_KEY, embeddedEnv, newDataDir } from '../../helpers/embedded.js';
import { analyzerApi, GOOD_PAGE } from '../../helpers/test-pages.js';

/** The robots check reads the site's robots.txt, from the origin the page was served from. */

const ROBOTS = 'User-agent: *\nDisallow: /private\nAllow: /private/open\n';

const test = base.extend('site', { scope: 'file' }, async ({}, { onCleanup }) => {
  const robotsAsked: string[] = [];
  const server = createServer((req, res) => {
    if (req.url === '/robots.txt') {
      robotsAsked.push(String(req.headers['user-agent']));
      res.writeHead(200, { 'content-type': 'text/plain' });
      return void res.end(ROBOTS);
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(GOOD_PAGE);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  onCleanup(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, robotsAsked };
});

test('a page its robots.txt disallows fails robots, naming the rule; an allowed one passes', async ({
  gateways,
  site,
}) => {
  const gateway = await gateways.start(DEFAULT_CONFIG, embeddedEnv(newDataDir()));
  const api = analyzerApi(gateway.url());
  const store = async (path: string) => {
    const reply = await api('POST', '/api/v1/reports', {
      key: ALICE_KEY,
      form: { url: `${site.url}${path}` },
    });
    expect(reply.status).toBe(201);
    return (reply.json() as { data: { score: number; results: Record<string, unknown> } }).data;
  };
  const blocked = await store('/private/page');
  expect(blocked.results.robots).toEqual({
    passed: false,
    importance: 'high',
    value: null,
    errors: { failed: ['/private'] },
  });
  // Fails https (3), robots (3) and text_compression (2) of 38 points.
  expect(blocked.score).toBe(79);
  // The keys in the originals' order: robots right after noindex.
  expect(Object.keys(blocked.results).slice(8, 11)).toEqual(['noindex', 'robots', 'in_page_links']);

  const open = await store('/private/open/page');
  expect(open.results.robots).toEqual({ passed: true, importance: 'high', value: null });
  expect(open.score).toBe(87);
  expect(site.robotsAsked).toEqual([
    'Mozilla/5.0 (compatible; tollgate-analyzer/1.0)',
    'Mozilla/5.0 (compatible; tollgate-analyzer/1.0)',
  ]);
});
