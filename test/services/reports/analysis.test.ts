import { once } from 'node:events';
import { createServer } from 'node:net';
import { describe, expect } from 'vitest';
import { DEFAULT_CONFIG } from '../../helpers/default-config.js';
import { ALICE_KEY, embeddedEnv, newDataDir, startEmbeddedGateway } from '../../helpers/embedded.js';
import { embeddedTest } from '../../helpers/fixtures.js';
import { send, startGateway } from '../../helpers/gateway.js';
import {
  analyzerApi,
  badResults,
  decentResults,
  goodResults,
  LARGE_SECTIONS,
  largePageHtml,
  TestPages,
} from '../../helpers/test-pages.js';

const urlError = (message: string) => ({ message: { url: [message] }, status: 422 });

const test = embeddedTest()
  .extend('api', { scope: 'file' }, ({ gateway }) => analyzerApi(gateway.url()))
  .extend(
    'store',
    { scope: 'file' },
    ({ api }) =>
      (url: string, target = api) =>
        target('POST', '/api/v1/reports', { key: ALICE_KEY, form: { url } }),
  )
  .extend('base', { scope: 'file' }, ({ pages }) => `http://127.0.0.1:${pages.port}`)
  .extend(
    'report',
    { scope: 'file' },
    ({ pages }) =>
      function report(path: string, result: string, score: number, results: object) {
        return {
          data: {
            id: expect.any(Number),
            url: `127.0.0.1:${pages.port}${path}`,
            project: '127.0.0.1',
            result,
            score,
            results,
            privacy: 1,
            password: false,
            generated_at: expect.any(String),
            created_at: expect.any(String),
            updated_at: expect.any(String),
          },
          status: 200,
        };
      },
  );

describe('analysis: good, decent and bad pages', () => {
  test('good (gzip): every check passes but https', async ({ store, base, report, pages }) => {
    const reply = await store(pages.url('/good'));
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual(
      report('/good', 'good', 92, goodResults(base, '/good', 'gzip', expect.any(Number))),
    );
  });

  test('good (brotli)', async ({ store, base, report, pages }) => {
    const reply = await store(pages.url('/good.br'));
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual(
      report('/good.br', 'good', 92, goodResults(base, '/good.br', 'br', expect.any(Number))),
    );
  });

  test('decent', async ({ store, base, report, pages }) => {
    const reply = await store(pages.url('/decent'));
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual(report('/decent', 'decent', 66, decentResults(base, expect.any(Number))));
  });

  test('bad', async ({ store, base, report, pages }) => {
    const reply = await store(pages.url('/bad'));
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual(report('/bad', 'bad', 26, badResults(base, expect.any(Number))));
  });

  test('credentials of a redirect target are dropped: the results do not show them', async ({
    store,
    base,
    report,
    pages,
  }) => {
    const target = `http://user:secret@127.0.0.1:${pages.port}/good`;
    const reply = await store(pages.url(`/redirect?to=${encodeURIComponent(target)}`));
    expect(reply.status).toBe(201);
    const { results } = (reply.json() as { data: { results: unknown } }).data;
    expect(JSON.stringify(results)).not.toContain('secret');
    expect(reply.json()).toEqual(
      report(
        `/redirect?to=${encodeURIComponent(target)}`,
        'good',
        92,
        goodResults(base, '/good', 'gzip', expect.any(Number)),
      ),
    );
  });

  test('five redirects are followed; the report keeps the URL as given', async ({
    store,
    base,
    report,
    pages,
  }) => {
    const reply = await store(pages.url('/chain/5'));
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual(
      report('/chain/5', 'good', 92, goodResults(base, '/chain/0', 'gzip', expect.any(Number))),
    );
  });
});

describe('analysis: off the event loop', () => {
  test('while a large page is analysed, an unrelated request of another host is answered first', async ({
    store,
    pages,
  }) => {
    // A gateway of its own, whose analysis pool has no thread yet: the one it starts for this page
    // tells when the page has been fetched, read and handed over.
    const own = await startEmbeddedGateway();
    try {
      const websites = () =>
        send(`${own.url()}/api/v1/websites`, {
          headers: { accept: 'application/json', authorization: `Bearer ${ALICE_KEY}` },
        });
      // Started beforehand, so that only the analysis stands between the two replies.
      expect((await websites()).status).toBe(200);

      const order: string[] = [];
      const handedOver = once(process, 'worker');
      const analysed = store(pages.url('/large'), analyzerApi(own.url())).then((reply) => {
        order.push('analysis');
        return reply;
      });
      await handedOver;
      // An analysis on the event loop would hold this request back until it ended.
      const other = await websites();
      order.push('websites');
      const reply = await analysed;

      expect(other.status).toBe(200);
      expect(reply.status, reply.text).toBe(201);
      expect(order).toEqual(['websites', 'analysis']);
      // The results stay small: lists and texts are cut, the counts are whole.
      const { results } = (reply.json() as { data: { results: Record<string, { value: unknown }> } }).data;
      expect(reply.text.length).toBeLessThan(20_000);
      expect(results.image_keywords!.value).toBe(LARGE_SECTIONS);
      expect(results.page_size!.value).toBe(Buffer.byteLength(largePageHtml()));
    } finally {
      await own.close();
    }
  });
});

describe('analysis: pages that cannot be fetched', () => {
  test.for<[string, string]>([
    ['/status/500', 'The page answered with HTTP status 500.'],
    ['/status/404', 'The page answered with HTTP status 404.'],
    ['/text', 'The page is not an HTML document.'],
    ['/loop/a', 'Too many redirects.'],
    ['/chain/6', 'Too many redirects.'],
    ['/huge', 'The page is larger than 5 MB.'],
    ['/huge-declared', 'The page is larger than 5 MB.'],
    ['/gzip-bomb', 'The page is larger than 5 MB.'],
  ])('%s: 422 on url', async ([path, message], { store, pages }) => {
    const reply = await store(pages.url(path));
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(urlError(message));
  });

  test('an unreachable port and an unresolvable host', async ({ store }) => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const { port } = probe.address() as { port: number };
    await new Promise((r) => probe.close(r));
    const closed = await store(`http://127.0.0.1:${port}/`);
    expect(closed.status).toBe(422);
    expect(closed.json()).toEqual(urlError('Could not connect to the host.'));
    const unknown = await store('http://no-such-host.invalid/');
    expect(unknown.status).toBe(422);
    expect(unknown.json()).toEqual(urlError('Could not resolve the host.'));
  });

  test('a failed update with results=1 keeps the report as it was', async ({ api, store }) => {
    const gone = await TestPages.start();
    const created = (await store(gone.url('/good'))).json() as { data: { id: number } };
    await gone.close();
    const reply = await api('PATCH', `/api/v1/reports/${created.data.id}`, {
      key: ALICE_KEY,
      form: { results: '1' },
    });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(urlError('Could not connect to the host.'));
    const shown = await api('GET', `/api/v1/reports/${created.data.id}`, { key: ALICE_KEY });
    expect(shown.json()).toEqual(created);
  });
});

describe('analysis: settings', () => {
  test('SSRF: without ANALYZER_ALLOW_PRIVATE_NETWORKS, non-public addresses are refused', async ({
    store,
    pages,
  }) => {
    const strict = await startGateway(
      DEFAULT_CONFIG,
      embeddedEnv(newDataDir(), { ANALYZER_ALLOW_PRIVATE_NETWORKS: 'false' }),
    );
    try {
      const strictApi = analyzerApi(strict.url());
      for (const url of [
        pages.url('/good'),
        `http://localhost:${pages.port}/good`,
        `http://[::1]:${pages.port}/good`,
        `http://[::ffff:127.0.0.1]:${pages.port}/good`,
        'http://169.254.169.254/latest/meta-data/',
        'http://10.0.0.1/',
        'http://0.0.0.0/',
      ]) {
        const reply = await store(url, strictApi);
        expect(reply.status, url).toBe(422);
        expect(reply.json()).toEqual(urlError('The address is not public: refusing to fetch it.'));
      }
      const listed = await strictApi('GET', '/api/v1/reports', { key: ALICE_KEY });
      expect((listed.json() as { meta: { total: number } }).meta.total).toBe(0);
    } finally {
      await strict.close();
    }
  });

  test('the fetch timeout comes from services.reports.fetchTimeout', async ({ store, pages }) => {
    expect(DEFAULT_CONFIG).toContain('fetchTimeout: 10s');
    const quick = await startGateway(
      DEFAULT_CONFIG.replace('fetchTimeout: 10s', 'fetchTimeout: 1s'),
      embeddedEnv(newDataDir()),
    );
    try {
      const reply = await store(pages.url('/slow'), analyzerApi(quick.url()));
      expect(reply.status).toBe(422);
      expect(reply.json()).toEqual(urlError('The page took longer than 1 second to load.'));
    } finally {
      await quick.close();
    }
  });
});
