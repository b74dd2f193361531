// The typed methods: the request each one sends (method, URL per API host, headers, body), and
// the answers they return or throw. An injected fetch stands in for the network.
import { describe, expect, test, vi } from 'vitest';
import { ApiError, TollgateClient } from '../../src/index.js';

interface Sent {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
}

function recorder(reply: () => Response = () => Response.json({ ok: true })) {
  const sent: Sent[] = [];
  const fetch = async (url: URL, init: RequestInit) => {
    sent.push({
      method: init.method ?? 'GET',
      url: url.href,
      headers: Object.fromEntries(new Headers(init.headers)),
      body: init.body == null ? undefined : String(init.body),
    });
    return reply();
  };
  return { sent, fetch };
}

describe('typed APIs', () => {
  test('websites: the spec paths on {base_url}, form-encoded bodies, the API key as Bearer', async () => {
    const { sent, fetch } = recorder();
    const client = new TollgateClient({ baseUrl: 'https://api.test', apiKey: 'k1', fetch });
    await client.websites.list({ search: 'shop', per_page: 25 });
    await client.websites.store({
      url: 'https://shop.example',
      privacy: 2,
      password: 'pw',
      exclude_ips: null,
    });
    await client.websites.update(7, { email: 1 });
    await client.websites.show('a/b');
    await client.websites.delete(7);
    expect(sent.map((s) => [s.method, s.url, s.body])).toEqual([
      ['GET', 'https://api.test/api/v1/websites?search=shop&per_page=25', undefined],
      [
        'POST',
        'https://api.test/api/v1/websites',
        'url=https%3A%2F%2Fshop.example&privacy=2&password=pw&exclude_ips=',
      ],
      ['PATCH', 'https://api.test/api/v1/websites/7', 'email=1'],
      ['GET', 'https://api.test/api/v1/websites/a%2Fb', undefined],
      ['DELETE', 'https://api.test/websites/7/destroy', undefined],
    ]);
    expect(sent[1]!.headers).toEqual({
      accept: 'application/json',
      authorization: 'Bearer k1',
      'content-type': 'application/x-www-form-urlencoded',
    });
  });

  test('an id the URL parser would drop or climb ("", ".", "..") is refused, and nothing is sent', async () => {
    const { sent, fetch } = recorder();
    const client = new TollgateClient({ baseUrl: 'https://api.test', analyzerUrl: 'https://an.test', fetch });
    for (const id of ['', '.', '..']) {
      await expect(client.websites.delete(id)).rejects.toThrow(new TypeError(`not an id: "${id}"`));
      await expect(client.websites.show(id)).rejects.toThrow(TypeError);
      await expect(client.reports.update(id, {})).rejects.toThrow(TypeError);
    }
    expect(sent).toEqual([]);
    await client.websites.show('...');
    expect(sent.map((s) => s.url)).toEqual(['https://api.test/api/v1/websites/...']);
  });

  test('reports: on the analyzer host, which the client must be given', async () => {
    const { sent, fetch } = recorder();
    const without = new TollgateClient({ baseUrl: 'https://api.test', apiKey: 'k1', fetch });
    expect(() => without.reports).toThrow('the reports API needs analyzerUrl (the analyzer host)');
    const client = new TollgateClient({
      baseUrl: 'https://api.test',
      analyzerUrl: 'https://analyzer.test/base/',
      apiKey: 'k1',
      fetch,
    });
    await client.reports.list({ result: 'good', sort_by: 'generated_at' });
    await client.reports.store({ url: 'https://shop.example/page' });
    await client.reports.update(3, { results: 1 });
    await client.reports.delete(3);
    expect(sent.map((s) => [s.method, s.url, s.body])).toEqual([
      ['GET', 'https://analyzer.test/base/api/v1/reports?result=good&sort_by=generated_at', undefined],
      ['POST', 'https://analyzer.test/base/api/v1/reports', 'url=https%3A%2F%2Fshop.example%2Fpage'],
      ['PATCH', 'https://analyzer.test/base/api/v1/reports/3', 'results=1'],
      ['DELETE', 'https://analyzer.test/base/api/v1/reports/3', undefined],
    ]);
  });

  test('widget and bulk sync: JSON bodies, their own tokens and base URLs', async () => {
    const { sent, fetch } = recorder();
    const client = new TollgateClient({
      baseUrl: 'https://api.test',
      widgetUrl: 'https://widget.test',
      workspaceToken: '7|s3cret',
      fetch,
    });
    await client.widget.init({ workspace: 'acme' });
    await client.widget.withToken('jwt-1').sendMessage({ body: 'hi' });
    await client.bulkSync.syncPosts({ items: [], done: true });
    expect(sent.map((s) => [s.method, s.url, s.headers['authorization'], s.body])).toEqual([
      ['POST', 'https://widget.test/api/v1/widget/init', undefined, '{"workspace":"acme"}'],
      ['POST', 'https://widget.test/api/v1/widget/messages', 'Bearer jwt-1', '{"body":"hi"}'],
      ['POST', 'https://api.test/v1/wp/posts/sync', 'Bearer 7|s3cret', '{"items":[],"done":true}'],
    ]);
    expect(sent[0]!.headers['content-type']).toBe('application/json');
  });

  test('a non-2xx answer throws ApiError with the status and the parsed body; a 204 gives undefined', async () => {
    const body = { error: { code: 'validation_failed', message: 'The email is invalid.' } };
    const failing = recorder(() => Response.json(body, { status: 422 }));
    const client = new TollgateClient({
      baseUrl: 'https://api.test',
      visitorToken: 't',
      fetch: failing.fetch,
    });
    const err = await client.widget.leads({ name: 'V', email: 'x', consent: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 422, body, message: 'request answered 422 (validation_failed)' });
    const empty = recorder(() => new Response(null, { status: 204 }));
    const typing = new TollgateClient({ baseUrl: 'https://api.test', visitorToken: 't', fetch: empty.fetch });
    expect(await typing.widget.typing({ typing: true })).toBeUndefined();
  });

  test("in a browser, a relative base URL resolves against the page's address", async () => {
    vi.stubGlobal('location', { href: 'https://shop.test/catalog/page' });
    try {
      const { sent, fetch } = recorder();
      const client = new TollgateClient({ baseUrl: '/gw', apiKey: 'k', fetch });
      await client.websites.show(1);
      await client.http.fetch('/healthz');
      expect(sent.map((s) => s.url)).toEqual([
        'https://shop.test/gw/api/v1/websites/1',
        'https://shop.test/healthz',
      ]);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
