// The list links (`links`, `meta.path`) of the websites and reports APIs come from the configured
// public URL, never from the request: a forged Host, X-Forwarded-Host or X-Forwarded-Proto, sent
// through the gateway (even from a trusted proxy) or straight to the service, changes nothing.
import { describe, expect } from 'vitest';
import { servicesConfigFrom } from '../../src/cli/services-config.js';
import { loadConfigText } from '../../src/rules/load.js';
import type { ServiceName } from '../../src/service-names.js';
import { openServiceDatabase, startService } from '../../src/services/registry.js';
import { DEFAULT_CONFIG } from '../helpers/default-config.js';
import { ALICE_KEY, embeddedEnv } from '../helpers/embedded.js';
import { embeddedTest } from '../helpers/fixtures.js';
import { send, silentLogger, type Reply } from '../helpers/gateway.js';

const WEBSITES_URL = 'https://stats.example.com';
const REPORTS_URL = 'https://analyzer.example.com';
/** The reports routes' host: that of REPORTS_PUBLIC_URL, set in every gateway's environment here. */
const ANALYZER_HOST = 'analyzer.example.com';

/** Everything a client can say about where it thinks it is. */
const FORGED = {
  'x-forwarded-host': 'evil.example',
  'x-forwarded-proto': 'gopher',
  'x-forwarded-prefix': '/evil',
  forwarded: 'host=evil.example;proto=https',
};

/** The shipped config with both public URLs emptied (no env value can empty a `${VAR:-default}`). */
function withoutPublicUrls(yaml: string): string {
  const out = yaml
    .replace('publicUrl: ${WEBSITES_PUBLIC_URL:-http://localhost:8080}', "publicUrl: ''")
    .replace(
      'publicUrl: ${REPORTS_PUBLIC_URL:-http://${REPORTS_HOST:-analyzer.localhost}:8080}',
      "publicUrl: ''",
    );
  expect(out.match(/publicUrl: ''/g)).toHaveLength(2);
  return out;
}

/** Every gateway's environment beyond embeddedEnv's (trusting 127.0.0.1, so the forged X-Forwarded-* reach the service as sent). */
const ENV = {
  TRUSTED_PROXIES: '127.0.0.1',
  WEBSITES_PUBLIC_URL: `${WEBSITES_URL}/`,
  REPORTS_PUBLIC_URL: REPORTS_URL,
};

const test = embeddedTest({ env: ENV })
  /** The shipped config's gateway, once Alice has her 21 websites. */
  .extend('via', { scope: 'file' }, async ({ gateway }) => {
    for (let i = 1; i <= 21; i++) {
      const url = `site-${i}.example`;
      const reply = await send(`${gateway.url()}/api/v1/websites`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
      });
      expect(reply.status).toBe(201);
    }
    return gateway.url();
  })
  /** One embedded service alone on its own port (on Alice's sites), as `tollgate serve NAME` runs it. */
  .extend('alone', { scope: 'file' }, ({ dataDir, via: _via }, { onCleanup }) => {
    const running: { close(): unknown }[] = [];
    onCleanup(async () => {
      for (const r of running.splice(0).reverse()) await r.close();
    });
    return async (name: ServiceName, yaml: string): Promise<string> => {
      const env = embeddedEnv(dataDir, ENV);
      const config = servicesConfigFrom(loadConfigText(yaml, 'gateway.yaml', env).config);
      const db = openServiceDatabase(config, silentLogger);
      running.push(db);
      const service = await startService(name, { db, config, logger: silentLogger }, '127.0.0.1', 0);
      running.push(service);
      return service.url;
    };
  });

const list = (base: string, path: string, host: string): Promise<Reply> =>
  send(`${base}${path}`, { headers: { host, ...FORGED, authorization: `Bearer ${ALICE_KEY}` } });

/** The `links` and `meta.path` of a list page, after checking the reply and that nothing forged came back. */
function addresses(reply: Reply): { links: unknown; path: unknown } {
  expect(reply.status, reply.text).toBe(200);
  expect(reply.text).not.toMatch(/evil|gopher/);
  const { links, meta } = reply.json() as { links: unknown; meta: { path: unknown } };
  return { links, path: meta.path };
}

/** Page 2 of Alice's 21 websites, ten a page. */
const websitesPage = (base: string) => ({
  links: {
    first: `${base}/api/v1/websites?per_page=10&sort=asc&page=1`,
    last: `${base}/api/v1/websites?per_page=10&sort=asc&page=3`,
    prev: `${base}/api/v1/websites?per_page=10&sort=asc&page=1`,
    next: `${base}/api/v1/websites?per_page=10&sort=asc&page=3`,
  },
  path: `${base}/api/v1/websites`,
});
/** Page 2 of Alice's (empty) reports. */
const reportsPage = (base: string) => ({
  links: {
    first: `${base}/api/v1/reports?sort=asc&per_page=10&page=1`,
    last: `${base}/api/v1/reports?sort=asc&per_page=10&page=1`,
    prev: `${base}/api/v1/reports?sort=asc&per_page=10&page=1`,
    next: null,
  },
  path: `${base}/api/v1/reports`,
});

describe('with services.*.publicUrl set', () => {
  test('through the gateway: the websites links ignore Host: evil.example', async ({ via }) => {
    expect(addresses(await list(via, '/api/v1/websites?per_page=10&page=2', 'evil.example'))).toEqual(
      websitesPage(WEBSITES_URL),
    );
  });

  test('through the gateway: the reports links ignore X-Forwarded-Host and -Proto', async ({ via }) => {
    expect(addresses(await list(via, '/api/v1/reports?sort=asc&page=2', ANALYZER_HOST))).toEqual(
      reportsPage(REPORTS_URL),
    );
  });

  test.for([
    ['websites', '/api/v1/websites?per_page=10&page=2', websitesPage(WEBSITES_URL)],
    ['reports', '/api/v1/reports?sort=asc&page=2', reportsPage(REPORTS_URL)],
  ] as const)(
    'the %s service alone, asked with Host: evil.example',
    async ([name, path, expected], { alone }) => {
      const base = await alone(name, DEFAULT_CONFIG);
      expect(addresses(await list(base, path, 'evil.example'))).toEqual(expected);
    },
  );
});

describe('with no public URL', () => {
  test('through the gateway: paths alone, on either host', async ({ dataDir, via: _seeded, gateways }) => {
    const via = (await gateways.start(withoutPublicUrls(DEFAULT_CONFIG), embeddedEnv(dataDir, ENV))).url();
    expect(addresses(await list(via, '/api/v1/websites?per_page=10&page=2', 'evil.example'))).toEqual(
      websitesPage(''),
    );
    expect(addresses(await list(via, '/api/v1/reports?sort=asc&page=2', ANALYZER_HOST))).toEqual(
      reportsPage(''),
    );
  });

  test.for([
    ['websites', '/api/v1/websites?per_page=10&page=2', websitesPage('')],
    ['reports', '/api/v1/reports?sort=asc&page=2', reportsPage('')],
  ] as const)('the %s service alone: paths alone', async ([name, path, expected], { alone }) => {
    const base = await alone(name, withoutPublicUrls(DEFAULT_CONFIG));
    expect(addresses(await list(base, path, 'evil.example'))).toEqual(expected);
  });

  test('the path /api/v1//websites is no list (a link starting "//" would lead off-site)', async ({
    alone,
  }) => {
    const base = await alone('websites', withoutPublicUrls(DEFAULT_CONFIG));
    const reply = await list(base, '/api/v1//websites', 'evil.example');
    expect({ status: reply.status, body: reply.json() }).toEqual({
      status: 404,
      body: { message: 'Resource not found.', status: 404 },
    });
  });

  // A path starting "//" is no API path but a statistics page of an empty domain: the pages' HTML
  // 404 (issue 20: unknown paths get it), whose only links stay on this site.
  test.for(['//evil.example/api/v1/websites', '//api/v1/websites'])(
    "the path %s is no list but the pages' 404, its links on this site",
    async (path, { alone }) => {
      const base = await alone('websites', withoutPublicUrls(DEFAULT_CONFIG));
      const reply = await list(base, path, 'evil.example');
      expect({ status: reply.status, type: reply.headers['content-type'] }).toEqual({
        status: 404,
        type: 'text/html; charset=utf-8',
      });
      expect(reply.text).toContain('<h1>Page not found</h1>');
      const links = [...reply.text.matchAll(/<a\b[^>]*\shref="([^"]*)"/g)].map((m) => m[1]!);
      expect(links).toEqual(['/', `/_/login?next=${encodeURIComponent(path)}`]);
    },
  );
});
