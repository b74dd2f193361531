import { createServer } from 'node:net';
import { test as base, describe, expect } from 'vitest';
import { PageFetcher, type FetchSettings } from '../../../src/services/reports/fetch-page.js';
import type { AddressGuard } from '../../../src/services/reports/address-policy.js';
import { DECENT_PAGE, GOOD_PAGE, TestPages } from '../../helpers/test-pages.js';

const SETTINGS: FetchSettings = { timeout: 10_000, maxRedirects: 5, maxSize: 5 * 1024 * 1024 };

/** The local test pages, and a fetcher that may open any address (no guard). */
const test = base
  .extend('pages', { scope: 'file' }, async ({}, { onCleanup }) => {
    const pages = await TestPages.start();
    onCleanup(() => pages.close());
    return pages;
  })
  .extend('open', { scope: 'file' }, ({}, { onCleanup }) => {
    const open = new PageFetcher(SETTINGS);
    onCleanup(() => open.close());
    return open;
  });

/** The message a fetch fails with. */
async function failure(fetcher: PageFetcher, url: string): Promise<string> {
  return fetcher.fetch(url).then(
    () => 'fetched',
    (err: Error) => err.message,
  );
}

/** A guard over a fixed table of names; only 127.0.0.1 counts as public here. */
function tableGuard(table: Record<string, string[][]>): AddressGuard & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    resolve: (hostname) => {
      asked.push(hostname);
      const answers = table[hostname];
      if (!answers) return Promise.reject(Object.assign(new Error(hostname), { code: 'ENOTFOUND' }));
      // Each lookup takes the next answer; the last one repeats.
      return Promise.resolve(answers.length > 1 ? answers.shift()! : answers[0]!);
    },
    allowed: (ip) => ip === '127.0.0.1',
  };
}

async function withFetcher<T>(fetcher: PageFetcher, run: (f: PageFetcher) => Promise<T>): Promise<T> {
  try {
    return await run(fetcher);
  } finally {
    await fetcher.close();
  }
}

describe('page fetcher', () => {
  test('a gzip page is decompressed; the facts are kept', async ({ pages, open }) => {
    const page = await open.fetch(pages.url('/good'));
    expect(page).toEqual({
      url: pages.url('/good'),
      headers: expect.objectContaining({
        'content-type': 'text/html; charset=utf-8',
        'content-encoding': 'gzip',
      }),
      html: GOOD_PAGE,
      encoding: 'gzip',
      size: Buffer.byteLength(GOOD_PAGE),
      loadTimeMs: expect.any(Number),
    });
  });

  test('brotli, and a latin-1 page decoded by its charset', async ({ pages, open }) => {
    expect((await open.fetch(pages.url('/good.br'))).html).toBe(GOOD_PAGE);
    const decent = await open.fetch(pages.url('/decent'));
    expect(decent.html).toBe(DECENT_PAGE);
  });

  test('five redirects are followed; the final URL is reported', async ({ pages, open }) => {
    expect((await open.fetch(pages.url('/chain/5'))).url).toBe(pages.url('/chain/0'));
  });

  test.for<[string, string]>([
    ['/chain/6', 'Too many redirects.'],
    ['/loop/a', 'Too many redirects.'],
    ['/status/500', 'The page answered with HTTP status 500.'],
    ['/status/404', 'The page answered with HTTP status 404.'],
    ['/text', 'The page is not an HTML document.'],
    ['/huge', 'The page is larger than 5 MB.'],
    ['/huge-declared', 'The page is larger than 5 MB.'],
    ['/gzip-bomb', 'The page is larger than 5 MB.'],
    ['/redirect?to=ftp://example.com/', 'The page redirected to an address that is not http or https.'],
  ])('%s: %s', async ([path, message], { pages, open }) => {
    expect(await failure(open, pages.url(path))).toBe(message);
  });

  test('the redirect bound and the size bound come from the settings', async ({ pages }) => {
    const strict = new PageFetcher({ timeout: 10_000, maxRedirects: 0, maxSize: 1024 });
    await withFetcher(strict, async (f) => {
      expect(await failure(f, pages.url('/chain/1'))).toBe('Too many redirects.');
      expect(await failure(f, pages.url('/good'))).toBe('fetched');
      expect(await failure(f, pages.url('/decent'))).toBe('fetched');
      expect(await failure(f, pages.url('/huge'))).toBe('The page is larger than 1 KB.');
    });
  });

  test('one deadline over the whole fetch', async ({ pages }) => {
    const quick = new PageFetcher({ ...SETTINGS, timeout: 300 });
    await withFetcher(quick, async (f) => {
      expect(await failure(f, pages.url('/slow'))).toBe('The page took longer than 0.3 seconds to load.');
    });
    const oneSecond = new PageFetcher({ ...SETTINGS, timeout: 1_000 });
    await withFetcher(oneSecond, async (f) => {
      expect(await failure(f, pages.url('/slow'))).toBe('The page took longer than 1 second to load.');
    });
  });

  test('a closed port and an unknown host', async ({ open }) => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const { port } = probe.address() as { port: number };
    await new Promise((r) => probe.close(r));
    expect(await failure(open, `http://127.0.0.1:${port}/`)).toBe('Could not connect to the host.');
    expect(await failure(open, 'http://no-such-host.invalid/')).toBe('Could not resolve the host.');
  });
});

describe('page fetcher: address guard', () => {
  test('a public name is fetched through the guard’s own lookup', async ({ pages }) => {
    const guard = tableGuard({ 'allowed.test': [['127.0.0.1']] });
    await withFetcher(new PageFetcher(SETTINGS, guard), async (f) => {
      const page = await f.fetch(`http://allowed.test:${pages.port}/good`);
      expect(page.html).toBe(GOOD_PAGE);
      // Once before the request, once for the connection.
      expect(guard.asked).toEqual(['allowed.test', 'allowed.test']);
    });
  });

  test('a redirect from an allowed address to a refused one is refused before its request', async ({
    pages,
  }) => {
    const guard = tableGuard({ 'allowed.test': [['127.0.0.1']], 'refused.test': [['10.0.0.1']] });
    await withFetcher(new PageFetcher(SETTINGS, guard), async (f) => {
      const to = encodeURIComponent(`http://refused.test:${pages.port}/good`);
      expect(await failure(f, `http://allowed.test:${pages.port}/redirect?to=${to}`)).toBe(
        'The address is not public: refusing to fetch it.',
      );
      expect(guard.asked).toEqual(['allowed.test', 'allowed.test', 'refused.test']);
    });
  });

  test('a redirect to a refused IP literal is refused', async ({ pages }) => {
    const guard = tableGuard({ 'allowed.test': [['127.0.0.1']] });
    await withFetcher(new PageFetcher(SETTINGS, guard), async (f) => {
      const to = encodeURIComponent(`http://[::1]:${pages.port}/good`);
      expect(await failure(f, `http://allowed.test:${pages.port}/redirect?to=${to}`)).toBe(
        'The address is not public: refusing to fetch it.',
      );
    });
  });

  test('a name that resolves to a public address for the check, then a private one (rebinding)', async ({
    pages,
  }) => {
    const guard = tableGuard({ 'rebind.test': [['127.0.0.1'], ['10.0.0.1']] });
    await withFetcher(new PageFetcher(SETTINGS, guard), async (f) => {
      expect(await failure(f, `http://rebind.test:${pages.port}/good`)).toBe(
        'The address is not public: refusing to fetch it.',
      );
      expect(guard.asked).toEqual(['rebind.test', 'rebind.test']);
    });
  });

  test('one refused address among several refuses the host; unknown names fail as DNS', async ({ pages }) => {
    const guard = tableGuard({ 'mixed.test': [['127.0.0.1', '192.168.1.1']] });
    await withFetcher(new PageFetcher(SETTINGS, guard), async (f) => {
      expect(await failure(f, `http://mixed.test:${pages.port}/good`)).toBe(
        'The address is not public: refusing to fetch it.',
      );
      expect(await failure(f, `http://unknown.test:${pages.port}/good`)).toBe('Could not resolve the host.');
    });
  });

  test('a resolver that never answers is bounded by the deadline', async () => {
    const stuck: AddressGuard = {
      resolve: () => new Promise<string[]>(() => undefined),
      allowed: () => true,
    };
    await withFetcher(new PageFetcher({ ...SETTINGS, timeout: 200 }, stuck), async (f) => {
      expect(await failure(f, 'http://stuck.test/')).toBe('The page took longer than 0.2 seconds to load.');
    });
  });

  test('the system resolver refuses loopback names and literals', async ({ pages }) => {
    const { isPublicAddress, systemResolver } =
      await import('../../../src/services/reports/address-policy.js');
    const guarded = new PageFetcher(SETTINGS, { resolve: systemResolver, allowed: isPublicAddress });
    await withFetcher(guarded, async (f) => {
      for (const url of [
        pages.url('/good'),
        `http://localhost:${pages.port}/good`,
        `http://[::ffff:127.0.0.1]:${pages.port}/`,
      ]) {
        expect(await failure(f, url), url).toBe('The address is not public: refusing to fetch it.');
      }
    });
  });
});
