import { describe, expect } from 'vitest';
import { dayOf } from '../../../../src/services/websites/analytics/days.js';
import { DIMENSIONS } from '../../../../src/services/websites/analytics/stats-source.js';
import { ALICE_KEY, BOB_KEY, startEmbeddedGateway } from '../../../helpers/embedded.js';
import { embeddedTest } from '../../../helpers/fixtures.js';
import { send, type Reply } from '../../../helpers/gateway.js';

/**
 * Analytics through the real gateway and the embedded websites service, over HTTP, on a real SQLite
 * file: the collector, the tracking script, the stats API and the account API. The gateway trusts
 * 127.0.0.1 as a proxy, so each test's X-Forwarded-For is its visitor's address.
 */

const FORM = 'application/x-www-form-urlencoded;charset=UTF-8';
const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const TODAY = dayOf(Date.now());
const RECORDED = { message: 'Recorded.', status: 200 };
const NOT_FOUND = { message: 'Resource not found.', status: 404 };
const EXCLUDED = { message: 'This visit is excluded from tracking.', status: 403 };

let unique = 0;
const host = (label: string) => `${label}-${++unique}.example`;
/** A visitor address no other test uses (its own per-IP window). */
const visitorIp = () => `198.51.100.${++unique % 250}`;

interface Visit {
  page: string;
  referrer?: string;
  screen_resolution?: string;
  'event[name]'?: string;
  'event[value]'?: string;
  'event[unit]'?: string;
}

const test = embeddedTest({ env: { TRUSTED_PROXIES: '127.0.0.1' } })
  .extend(
    'collect',
    { scope: 'file' },
    ({ gateway }) =>
      function collect(
        fields: Visit | Record<string, string>,
        options: { ua?: string; ip?: string; lang?: string; headers?: Record<string, string> } = {},
      ): Promise<Reply> {
        return send(`${gateway.url()}/api/event`, {
          method: 'POST',
          headers: {
            'content-type': FORM,
            'user-agent': options.ua ?? CHROME,
            'x-forwarded-for': options.ip ?? visitorIp(),
            ...(options.lang ? { 'accept-language': options.lang } : {}),
            ...options.headers,
          },
          body: new URLSearchParams(fields as Record<string, string>).toString(),
        });
      },
  )
  .extend(
    'api',
    { scope: 'file' },
    ({ gateway }) =>
      function api(path: string, key = ALICE_KEY): Promise<Reply> {
        return send(`${gateway.url()}${path}`, {
          headers: { accept: 'application/json', authorization: `Bearer ${key}` },
        });
      },
  )
  .extend(
    'website',
    { scope: 'file' },
    ({ gateway }) =>
      async function website(form: Record<string, string>, key = ALICE_KEY): Promise<number> {
        const reply = await send(`${gateway.url()}/api/v1/websites`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': FORM, accept: 'application/json' },
          body: new URLSearchParams(form).toString(),
        });
        expect(reply.status, reply.text).toBe(201);
        return (reply.json() as { data: { id: number } }).data.id;
      },
  )
  /** The data rows of a stats query (today's range unless given). */
  .extend(
    'stats',
    { scope: 'file' },
    ({ api }) =>
      async function stats(id: number, query: string, key = ALICE_KEY): Promise<unknown> {
        const reply = await api(`/api/v1/stats/${id}?${query}`, key);
        expect(reply.status, reply.text).toBe(200);
        return (reply.json() as { data: unknown }).data;
      },
  );

describe('the collector', () => {
  test('records a visit: 200, and the visitor, landing page and referrer counted', async ({
    website,
    collect,
    stats,
  }) => {
    const site = host('visit');
    const id = await website({ url: site });
    const reply = await collect(
      {
        page: `https://www.${site}/pricing?utm_campaign=spring`,
        referrer: 'https://www.google.de/search?q=x',
        screen_resolution: '1920x1080',
      },
      { lang: 'de-DE,en;q=0.8', ip: '8.8.8.8' },
    );
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(reply.json()).toEqual(RECORDED);
    const one = (value: string) => [{ value, count: 1 }];
    expect(await stats(id, `name=pageviews&from=${TODAY}&to=${TODAY}`)).toEqual(one(TODAY));
    expect(await stats(id, `name=visitors&from=${TODAY}`)).toEqual(one(TODAY));
    expect(await stats(id, 'name=pages')).toEqual(one('/pricing?utm_campaign=spring'));
    expect(await stats(id, 'name=landing_pages')).toEqual(one('/pricing?utm_campaign=spring'));
    expect(await stats(id, 'name=referrers')).toEqual(one('google.de'));
    expect(await stats(id, 'name=search_engines')).toEqual(one('Google'));
    expect(await stats(id, 'name=social_networks')).toEqual([]);
    expect(await stats(id, 'name=campaigns')).toEqual(one('spring'));
    expect(await stats(id, 'name=countries')).toEqual(one('US'));
    expect(await stats(id, 'name=languages')).toEqual(one('de'));
    expect(await stats(id, 'name=browsers')).toEqual(one('Chrome'));
    expect(await stats(id, 'name=operating_systems')).toEqual(one('Windows'));
    expect(await stats(id, 'name=devices')).toEqual(one('desktop'));
    expect(await stats(id, 'name=screen_resolutions')).toEqual(one('1920x1080'));
    const hour = String(new Date().getUTCHours());
    const hours = (await stats(id, 'name=visitors_hours&per_page=100')) as { value: string; count: number }[];
    expect(hours).toHaveLength(24);
    expect(hours.filter((h) => h.count > 0)).toEqual([{ value: hour, count: 1 }]);
    const views = (await stats(id, 'name=pageviews_hours&per_page=100')) as {
      value: string;
      count: number;
    }[];
    expect(views.map((h) => h.value)).toEqual(Array.from({ length: 24 }, (_, n) => String(n)));
    expect(views.filter((h) => h.count > 0)).toEqual([{ value: hour, count: 1 }]);
  });

  test('a page reached from the same site is a pageview only: no visitor, landing page or referrer', async ({
    website,
    collect,
    stats,
  }) => {
    const site = host('internal');
    const id = await website({ url: site });
    expect((await collect({ page: `https://${site}/`, referrer: '' })).status).toBe(200);
    expect((await collect({ page: `https://${site}/b`, referrer: `https://www.${site}/` })).status).toBe(200);
    expect(
      (await collect({ page: `https://${site}/c`, referrer: 'https://t.co/abc' }, { ua: IPHONE })).status,
    ).toBe(200);
    expect(await stats(id, `name=pageviews&from=${TODAY}`)).toEqual([{ value: TODAY, count: 3 }]);
    expect(await stats(id, `name=visitors&from=${TODAY}`)).toEqual([{ value: TODAY, count: 2 }]);
    expect(await stats(id, 'name=pages&sort=min')).toEqual([
      { value: '/', count: 1 },
      { value: '/b', count: 1 },
      { value: '/c', count: 1 },
    ]);
    expect(await stats(id, 'name=landing_pages')).toEqual([
      { value: '/', count: 1 },
      { value: '/c', count: 1 },
    ]);
    expect(await stats(id, 'name=referrers')).toEqual([{ value: 't.co', count: 1 }]);
    expect(await stats(id, 'name=social_networks')).toEqual([{ value: 'Twitter', count: 1 }]);
    expect(await stats(id, 'name=devices')).toEqual([
      { value: 'desktop', count: 1 },
      { value: 'mobile', count: 1 },
    ]);
  });

  test('an unknown host is 404; a missing or malformed page is 422', async ({ collect }) => {
    const unknown = await collect({ page: `https://${host('nobody')}/` });
    expect(unknown.status).toBe(404);
    expect(unknown.json()).toEqual(NOT_FOUND);
    const missing = await collect({ referrer: 'x' });
    expect(missing.status).toBe(422);
    expect(missing.json()).toEqual({ message: { page: ['The page field is required.'] }, status: 422 });
    const bad = await collect({ page: 'ftp://example.com/' });
    expect(bad.status).toBe(422);
    expect(bad.json()).toEqual({ message: { page: ['The page must be a valid URL.'] }, status: 422 });
  });

  test('exclude_ips: a listed IP and a CIDR range are 403, others are recorded', async ({
    website,
    collect,
    stats,
  }) => {
    const site = host('ips');
    const id = await website({ url: site, exclude_ips: '203.0.113.7\n2001:db8::/32\n192.0.2.0/24' });
    for (const ip of ['203.0.113.7', '192.0.2.200', '2001:db8::1']) {
      const reply = await collect({ page: `https://${site}/` }, { ip });
      expect(reply.status, ip).toBe(403);
      expect(reply.json()).toEqual(EXCLUDED);
    }
    expect((await collect({ page: `https://${site}/` }, { ip: '203.0.113.8' })).status).toBe(200);
    expect(await stats(id, `name=pageviews&from=${TODAY}`)).toEqual([{ value: TODAY, count: 1 }]);
  });

  test('an X-Forwarded-For from the visitor itself is not trusted past the gateway', async ({
    website,
    collect,
  }) => {
    const site = host('spoof');
    await website({ url: site, exclude_ips: '203.0.113.9' });
    // The visitor claims 203.0.113.9 in front of its real address: the gateway trusts 127.0.0.1
    // only, so the address it resolves is the last untrusted hop, 198.51.100.250.
    const reply = await collect({ page: `https://${site}/` }, { ip: '203.0.113.9, 198.51.100.250' });
    expect(reply.status).toBe(200);
  });

  test('exclude_ips applies to the address the gateway limited by, past blank and ip:port hops', async ({
    website,
    collect,
    stats,
  }) => {
    const site = host('chain');
    const excluded = visitorIp();
    const id = await website({ url: site, exclude_ips: excluded });
    // The gateway's limiter key of a chain: a later beacon from that address alone shares its
    // per-IP window, so it has one request fewer remaining.
    const expectKeyedBy = async (chainReply: Reply, address: string) => {
      const probe = await collect({ page: 'https://nobody.example/' }, { ip: address });
      expect(probe.status).toBe(404);
      const remaining = Number(chainReply.headers['x-ratelimit-remaining']);
      expect(remaining).toBeGreaterThan(0);
      expect(probe.headers['x-ratelimit-remaining']).toBe(String(remaining - 1));
    };
    // 127.0.0.1 is trusted and skipped, the blank hop too, and the port is dropped: the gateway
    // limits by the excluded address, and the visit is excluded.
    const hidden = await collect({ page: `https://${site}/` }, { ip: `${excluded}:4711, , 127.0.0.1` });
    expect(hidden.status).toBe(403);
    expect(hidden.json()).toEqual(EXCLUDED);
    await expectKeyedBy(hidden, excluded);
    // The excluded address left of an untrusted hop (with a port, then a blank): the gateway limits
    // by that hop, and the visit is recorded.
    const other = visitorIp();
    const shown = await collect({ page: `https://${site}/` }, { ip: `${excluded}, ${other}:8080, ` });
    expect(shown.status).toBe(200);
    expect(shown.json()).toEqual(RECORDED);
    await expectKeyedBy(shown, other);
    expect(await stats(id, `name=pageviews&from=${TODAY}`)).toEqual([{ value: TODAY, count: 1 }]);
  });

  test('exclude_bots: a bot user agent is 403, recorded when the setting is off', async ({
    website,
    collect,
    stats,
  }) => {
    const on = host('bots-on');
    await website({ url: on });
    const refused = await collect({ page: `https://${on}/` }, { ua: GOOGLEBOT });
    expect(refused.status).toBe(403);
    expect(refused.json()).toEqual(EXCLUDED);
    const off = host('bots-off');
    const id = await website({ url: off, exclude_bots: '0' });
    expect((await collect({ page: `https://${off}/` }, { ua: GOOGLEBOT })).status).toBe(200);
    expect(await stats(id, 'name=pages')).toEqual([{ value: '/', count: 1 }]);
  });

  test('exclude_params: listed parameters are removed from the page; "&" removes every one', async ({
    website,
    collect,
    stats,
  }) => {
    const some = host('params');
    const a = await website({ url: some, exclude_params: 'token\nsession' });
    await collect({ page: `https://${some}/p?token=1&keep=2&session=3` });
    await collect({ page: `https://${some}/q?token=1` });
    expect(await stats(a, 'name=pages')).toEqual([
      { value: '/p?keep=2', count: 1 },
      { value: '/q', count: 1 },
    ]);
    const all = host('params-all');
    const b = await website({ url: all, exclude_params: '&' });
    await collect({ page: `https://${all}/r?a=1&b=2#frag` });
    expect(await stats(b, 'name=pages')).toEqual([{ value: '/r', count: 1 }]);
  });

  test('events: counted by name (form and JSON), not as pageviews; a bad value is 422', async ({
    website,
    collect,
    gateway,
    stats,
  }) => {
    const site = host('events');
    const id = await website({ url: site });
    const page = `https://${site}/checkout`;
    expect(
      (await collect({ page, 'event[name]': 'purchase', 'event[value]': '42', 'event[unit]': 'EUR' })).json(),
    ).toEqual(RECORDED);
    const json = await send(`${gateway.url()}/api/event`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': CHROME, 'x-forwarded-for': visitorIp() },
      body: JSON.stringify({ page, event: { name: 'purchase', value: 8, unit: 'EUR' } }),
    });
    expect(json.status).toBe(200);
    await collect({ page, 'event[name]': 'signup' });
    expect(await stats(id, 'name=events')).toEqual([
      { value: 'purchase', count: 2, values: [{ unit: 'EUR', count: 2, total: 50 }] },
      { value: 'signup', count: 1, values: [] },
    ]);
    expect(await stats(id, 'name=pages')).toEqual([]);
    const bad = await collect({
      page,
      'event[name]': 'x',
      'event[value]': '-3',
      'event[unit]': 'u'.repeat(33),
    });
    expect(bad.status).toBe(422);
    expect(bad.json()).toEqual({
      message: {
        'event.value': ['The event.value field must be a positive integer of at most 10 digits.'],
        'event.unit': ['The event.unit field must not be greater than 32 characters.'],
      },
      status: 422,
    });
  });

  test('CORS: the preflight from any origin, and the headers on the answer', async ({
    gateway,
    website,
    collect,
  }) => {
    const pre = await send(`${gateway.url()}/api/event`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://shop.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('*');
    expect(pre.headers['access-control-allow-methods']).toBe('POST');
    expect(pre.headers['access-control-allow-headers']).toBe('Content-Type');
    expect(pre.headers['access-control-max-age']).toBe('3600');
    const site = host('cors');
    await website({ url: site });
    const reply = await collect({ page: `https://${site}/` }, { headers: { origin: `https://${site}` } });
    expect(reply.status).toBe(200);
    expect(reply.headers['access-control-allow-origin']).toBe('*');
    expect(reply.headers.vary).toBe('Origin');
  });
});

describe('the tracking script', () => {
  test('GET /js/script.js: JavaScript with an ETag and Cache-Control; 304 on If-None-Match', async ({
    gateway,
  }) => {
    const reply = await send(`${gateway.url()}/js/script.js`);
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(reply.headers['cache-control']).toBe('public, max-age=3600');
    const etag = reply.headers.etag!;
    expect(etag).toMatch(/^"[\w-]{27}"$/);
    expect(reply.text).toContain('navigator.sendBeacon');
    expect(reply.text).toContain('keepalive: true');
    expect(reply.text).toContain("attr('data-dnt') === 'true'");
    expect(reply.text).toContain('window.pa.track = function (name, value, unit)');
    const again = await send(`${gateway.url()}/js/script.js`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.etag).toBe(etag);
    const stale = await send(`${gateway.url()}/js/script.js`, { headers: { 'if-none-match': '"old"' } });
    expect(stale.status).toBe(200);
    const head = await send(`${gateway.url()}/js/script.js`, { method: 'HEAD' });
    expect([head.status, head.headers.etag, head.text]).toEqual([200, etag, '']);
  });
});

/** `id`: one website with /a ×3, /b ×2, /Abc ×1, /c ×1, every one a visitor (no referrer). */
const statsTest = test.extend('id', { scope: 'file' }, async ({ website, collect }) => {
  const site = host('stats');
  const id = await website({ url: site });
  for (const path of ['/a', '/a', '/a', '/b', '/b', '/Abc', '/c']) {
    expect((await collect({ page: `https://${site}${path}` })).status).toBe(200);
  }
  return id;
});

describe('the stats API', () => {
  statsTest('the list envelope, largest first by default, with links', async ({ id, api }) => {
    const reply = await api(`/api/v1/stats/${id}?name=pages`);
    expect(reply.status).toBe(200);
    const path = `http://localhost:8080/api/v1/stats/${id}`;
    expect(reply.json()).toEqual({
      data: [
        { value: '/a', count: 3 },
        { value: '/b', count: 2 },
        { value: '/Abc', count: 1 },
        { value: '/c', count: 1 },
      ],
      links: {
        first: `${path}?name=pages&sort=max&per_page=10&page=1`,
        last: `${path}?name=pages&sort=max&per_page=10&page=1`,
        prev: null,
        next: null,
      },
      meta: { current_page: 1, from: 1, last_page: 1, path, per_page: 10, to: 4, total: 4 },
      status: 200,
    });
  });

  statsTest('sort=min, search (case-insensitive), paging', async ({ id, stats, api }) => {
    expect(await stats(id, 'name=pages&sort=min')).toEqual([
      { value: '/Abc', count: 1 },
      { value: '/c', count: 1 },
      { value: '/b', count: 2 },
      { value: '/a', count: 3 },
    ]);
    expect(await stats(id, 'name=pages&search=A')).toEqual([
      { value: '/a', count: 3 },
      { value: '/Abc', count: 1 },
    ]);
    const second = await api(`/api/v1/stats/${id}?name=pages&per_page=10&page=2`);
    expect((second.json() as { data: unknown[]; meta: { total: number } }).data).toEqual([]);
  });

  statsTest('an out-of-range per_page and an unknown sort fall back to the defaults', async ({ id, api }) => {
    for (const query of ['per_page=5', 'per_page=101', 'per_page=x', 'sort=up']) {
      const reply = await api(`/api/v1/stats/${id}?name=pages&${query}`);
      expect(reply.status).toBe(200);
      const body = reply.json() as { data: { value: string }[]; meta: { per_page: number } };
      expect(body.meta.per_page).toBe(10);
      expect(body.data[0]!.value).toBe('/a');
    }
  });

  statsTest(
    'ranges: a range without today is empty; the series is zero-filled per day',
    async ({ id, stats, api }) => {
      expect(await stats(id, 'name=pages&from=2020-01-01&to=2020-01-31')).toEqual([]);
      expect(await stats(id, 'name=visitors&from=2020-01-01&to=2020-01-03')).toEqual([
        { value: '2020-01-01', count: 0 },
        { value: '2020-01-02', count: 0 },
        { value: '2020-01-03', count: 0 },
      ]);
      const defaultRange = (await api(`/api/v1/stats/${id}?name=pageviews&per_page=100`)).json() as {
        data: { value: string; count: number }[];
      };
      expect(defaultRange.data).toHaveLength(30);
      expect(defaultRange.data.at(-1)).toEqual({ value: TODAY, count: 7 });
    },
  );

  statsTest(
    'name=realtime: the visits of the last minutes, newest first, in snake_case, paged',
    async ({ id, api }) => {
      const reply = await api(`/api/v1/stats/${id}?name=realtime&minutes=5&per_page=10`);
      expect(reply.status).toBe(200);
      const path = `http://localhost:8080/api/v1/stats/${id}`;
      const body = reply.json() as { data: { at: string }[] };
      const visit = (page: string) => ({
        at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/) as unknown,
        page,
        referrer: null,
        // The geo database's country of 198.51.100.0/24, as the countries dimension counts it.
        country: 'AU',
        browser: 'Chrome',
        operating_system: 'Windows',
        device: 'desktop',
        visitor: true,
      });
      const links = `${path}?name=realtime&minutes=5&per_page=10&sort=max&page=1`;
      expect(body).toEqual({
        data: ['/c', '/Abc', '/b', '/b', '/a', '/a', '/a'].map(visit),
        links: { first: links, last: links, prev: null, next: null },
        meta: { current_page: 1, from: 1, last_page: 1, path, per_page: 10, to: 7, total: 7 },
        status: 200,
      });
      const times = body.data.map((v) => v.at);
      expect(times).toEqual([...times].sort().reverse());
      const second = (await api(`/api/v1/stats/${id}?name=realtime&per_page=10&page=2`)).json() as {
        data: unknown[];
        meta: { total: number };
      };
      expect(second.data).toEqual([]);
      expect(second.meta.total).toBe(7);
    },
  );

  statsTest('name=realtime: minutes outside 1–30 is a 422; another owner gets 404', async ({ id, api }) => {
    for (const minutes of ['0', '31', 'x', '1.5']) {
      const reply = await api(`/api/v1/stats/${id}?name=realtime&minutes=${minutes}`);
      expect(reply.status, minutes).toBe(422);
      expect(reply.json()).toEqual({
        message: { minutes: ['The minutes field must be an integer between 1 and 30.'] },
        status: 422,
      });
    }
    const other = await api(`/api/v1/stats/${id}?name=realtime`, BOB_KEY);
    expect(other.status).toBe(404);
    expect(other.json()).toEqual(NOT_FOUND);
  });

  statsTest.for(DIMENSIONS)('name=%s answers its rows', async (name, { id, api }) => {
    const reply = await api(`/api/v1/stats/${id}?name=${name}`);
    expect(reply.status).toBe(200);
  });

  statsTest('a bad name, date or range is 422 in the Laravel shape', async ({ id, api }) => {
    const cases: [string, Record<string, string[]>][] = [
      ['', { name: ['The name field is required.'] }],
      ['name=users', { name: ['The selected name is invalid.'] }],
      ['name=pages&from=2020-02-30', { from: ['The from field must match the format Y-m-d.'] }],
      [
        'name=pages&from=2020-02-02&to=2020-02-01',
        { to: ['The to field must be a date after or equal to from.'] },
      ],
      ['name=pages&from=2025-01-01&to=2026-01-03', { from: ['The range must not be longer than 367 days.'] }],
    ];
    for (const [query, message] of cases) {
      const reply = await api(`/api/v1/stats/${id}?${query}`);
      expect(reply.status, query).toBe(422);
      expect(reply.json()).toEqual({ message, status: 422 });
    }
  });

  statsTest(
    "another user's website, a missing one and a bad id are 404; no key is 401",
    async ({ id, api, gateway }) => {
      for (const path of [
        `/api/v1/stats/${id}?name=pages`,
        '/api/v1/stats/999999?name=pages',
        '/api/v1/stats/x',
      ]) {
        const reply = await api(path, path.includes(String(id)) ? BOB_KEY : ALICE_KEY);
        expect(reply.status, path).toBe(404);
        expect(reply.json()).toEqual(NOT_FOUND);
      }
      const anonymous = await send(`${gateway.url()}/api/v1/stats/${id}?name=pages`);
      expect(anonymous.status).toBe(401);
      expect(anonymous.json()).toEqual({ message: 'Unauthenticated.' });
    },
  );
});

describe('the account API', () => {
  test("GET /api/v1/account: the key owner's account", async ({ api, gateway }) => {
    const reply = await api('/api/v1/account', BOB_KEY);
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({
      data: {
        id: expect.any(Number),
        name: 'bootstrap-2',
        email: null,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      },
      status: 200,
    });
    const anonymous = await send(`${gateway.url()}/api/v1/account`);
    expect(anonymous.status).toBe(401);
  });
});

describe('the per-IP limit of the collector', () => {
  test('past COLLECTOR_LIMIT beacons a minute from one address: 429 with the CORS headers', async () => {
    const limited = await startEmbeddedGateway(undefined, {
      TRUSTED_PROXIES: '127.0.0.1',
      COLLECTOR_LIMIT: '2',
    });
    try {
      const post = (ip: string) =>
        send(`${limited.url()}/api/event`, {
          method: 'POST',
          headers: { 'content-type': FORM, 'x-forwarded-for': ip, origin: 'https://a.example' },
          body: 'page=https%3A%2F%2Fnobody.example%2F',
        });
      expect((await post('192.0.2.1')).status).toBe(404);
      expect((await post('192.0.2.1')).status).toBe(404);
      const refused = await post('192.0.2.1');
      expect(refused.status).toBe(429);
      expect(refused.json()).toEqual({
        error: {
          code: 'rate_limited',
          message: 'Too many tracking events from this address. Please slow down.',
        },
      });
      expect(refused.headers['x-ratelimit-limit']).toBe('2');
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
      expect(refused.headers['access-control-allow-origin']).toBe('*');
      // Another address has its own window.
      expect((await post('192.0.2.2')).status).toBe(404);
    } finally {
      await limited.close();
    }
  });
});
