import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  classify,
  ipExcluded,
  language,
  recordedPage,
  type CollectorInput,
} from '../../../../src/services/websites/analytics/classify.js';
import { TrustedProxies } from '../../../../src/net/client-ip.js';
import { visitorIp } from '../../../../src/services/websites/analytics/visitor-ip.js';
import { parseCollectorBody } from '../../../../src/services/websites/analytics/collector.js';
import { searchEngine, socialNetwork } from '../../../../src/services/websites/analytics/referrer-groups.js';
import { parseStatsQuery } from '../../../../src/services/websites/analytics/stats-query.js';
import {
  notModified,
  TRACKING_SCRIPT_ETAG,
} from '../../../../src/services/websites/analytics/tracking-script.js';
import { HttpError } from '../../../../src/services/kit/errors.js';

const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const SITE = { url: 'shop.example', exclude_bots: 1, exclude_params: null, exclude_ips: null };
const AT = Date.UTC(2026, 10, 24, 13, 5);

const input = (over: Partial<CollectorInput> = {}): CollectorInput => ({
  page: new URL('https://shop.example/a?utm_campaign=spring&x=1'),
  referrer: undefined,
  screenResolution: '1920x1080',
  event: null,
  userAgent: CHROME,
  acceptLanguage: 'fr-CA,fr;q=0.9',
  ip: '81.2.69.160',
  atMs: AT,
  ...over,
});

describe('classify', () => {
  test('a direct visit: a visitor with every dimension', () => {
    expect(classify(SITE, input(), () => 'GB')).toEqual({
      recorded: true,
      hit: {
        atMs: AT,
        page: '/a?utm_campaign=spring&x=1',
        visitor: true,
        referrer: null,
        searchEngine: null,
        socialNetwork: null,
        campaign: 'spring',
        country: 'GB',
        language: 'fr',
        browser: 'Chrome',
        operatingSystem: 'Windows',
        device: 'desktop',
        screenResolution: '1920x1080',
        event: null,
      },
    });
  });

  test.each([
    ['https://www.shop.example/x', false, null],
    ['https://shop.example./x', false, null],
    ['https://www.bing.com/search', true, 'bing.com'],
    ['not a url', true, null],
    ['', true, null],
    // Longer than any DNS name: not stored (a beacon could otherwise store megabytes per hit).
    [`https://${'a'.repeat(250)}.example/`, true, null],
  ])('referrer %j: visitor %s, referrer %j', (referrer, visitor, host) => {
    const verdict = classify(SITE, input({ referrer }), () => null);
    expect(verdict.recorded && [verdict.hit.visitor, verdict.hit.referrer]).toEqual([visitor, host]);
  });

  test('excluded: an IP, a bot (only with exclude_bots)', () => {
    expect(classify({ ...SITE, exclude_ips: '81.2.69.0/24' }, input(), () => null)).toEqual({
      recorded: false,
      reason: 'ip',
    });
    const bot = input({ userAgent: 'Googlebot/2.1 (+http://www.google.com/bot.html)' });
    expect(classify(SITE, bot, () => null)).toEqual({ recorded: false, reason: 'bot' });
    expect(classify({ ...SITE, exclude_bots: 0 }, bot, () => null).recorded).toBe(true);
  });

  test('a malformed screen resolution and a missing Accept-Language are not recorded', () => {
    const verdict = classify(SITE, input({ screenResolution: '1920×1080', acceptLanguage: '*' }), () => null);
    expect(verdict.recorded && [verdict.hit.screenResolution, verdict.hit.language]).toEqual([null, null]);
  });
});

describe('the pure rules', () => {
  test.each([
    ['203.0.113.7', '203.0.113.7', true],
    ['203.0.113.8', '203.0.113.7', false],
    ['::ffff:192.0.2.1', '192.0.2.0/24', true],
    ['2001:db8::5', '2001:db8::/32', true],
    ['2001:db9::5', '2001:db8::/32', false],
    ['10.1.2.3', '2001:db8::/32\n10.0.0.0/8', true],
    [undefined, '10.0.0.0/8', false],
  ] as const)('ipExcluded(%j, %j) is %s', (ip, lines, excluded) => {
    expect(ipExcluded(ip, lines)).toBe(excluded);
  });

  test.each([
    ['https://s.example/p?a=1&b=2&a=3', 'a', '/p?b=2'],
    ['https://s.example/p?a=1', 'a', '/p'],
    ['https://s.example/p?a=1&b=2', '&', '/p'],
    ['https://s.example/p?a=1#f', null, '/p?a=1'],
    [`https://s.example/${'x'.repeat(300)}`, null, `/${'x'.repeat(254)}`],
  ])('recordedPage(%j, %j) is %j', (url, params, page) => {
    expect(recordedPage(new URL(url), params)).toBe(page);
  });

  test.each([
    ['en-US,en;q=0.9', 'en'],
    ['DE', 'de'],
    ['zh-Hant-TW', 'zh'],
    ['*', null],
    [undefined, null],
  ])('language(%j) is %j', (header, lang) => {
    expect(language(header)).toBe(lang);
  });

  test('search engines and social networks by host and subdomain', () => {
    expect(searchEngine('www.google.co.uk')).toBe('Google');
    expect(searchEngine('google.de')).toBe('Google');
    expect(searchEngine('duckduckgo.com')).toBe('DuckDuckGo');
    expect(searchEngine('notgoogle.com')).toBeNull();
    expect(socialNetwork('m.facebook.com')).toBe('Facebook');
    expect(socialNetwork('t.co')).toBe('Twitter');
    expect(socialNetwork('news.ycombinator.com')).toBe('Hacker News');
    expect(socialNetwork('example.com')).toBeNull();
  });

  test('the visitor address: X-Forwarded-For only from a loopback peer, walked past trusted proxies', () => {
    expect(visitorIp('127.0.0.1', '198.51.100.1', new TrustedProxies([]))).toBe('198.51.100.1');
    expect(visitorIp('127.0.0.1', '203.0.113.9, 198.51.100.1', new TrustedProxies([]))).toBe('198.51.100.1');
    expect(visitorIp('127.0.0.1', '203.0.113.9, 10.0.0.2', new TrustedProxies(['10.0.0.0/8']))).toBe(
      '203.0.113.9',
    );
    expect(visitorIp('::ffff:127.0.0.1', 'junk, 10.0.0.2', new TrustedProxies(['10.0.0.0/8']))).toBe(
      '10.0.0.2',
    );
    expect(visitorIp('192.0.2.50', '198.51.100.1', new TrustedProxies([]))).toBe('192.0.2.50');
    expect(visitorIp('127.0.0.1', undefined, new TrustedProxies([]))).toBe('127.0.0.1');
  });

  test('If-None-Match: the current tag, weak or in a list, or "*"', () => {
    expect(notModified(TRACKING_SCRIPT_ETAG)).toBe(true);
    expect(notModified(`"x", W/${TRACKING_SCRIPT_ETAG}`)).toBe(true);
    expect(notModified('*')).toBe(true);
    expect(notModified('"x"')).toBe(false);
    expect(notModified(undefined)).toBe(false);
  });
});

describe('the collector body', () => {
  const fields = (body: unknown) => {
    try {
      parseCollectorBody(body);
      return undefined;
    } catch (err) {
      return (err as HttpError).fields;
    }
  };

  test('form fields and the JSON equivalent read the same', () => {
    const form = parseCollectorBody({
      page: 'https://a.example/',
      'event[name]': 'buy',
      'event[value]': '12',
    });
    const json = parseCollectorBody({ page: 'https://a.example/', event: { name: 'buy', value: 12 } });
    expect(form.event).toEqual({ name: 'buy', value: 12, unit: '' });
    expect(json.event).toEqual(form.event);
  });

  test.each([
    [{}, { page: ['The page field is required.'] }],
    [{ page: ['https://a.example/'] }, { page: ['The page field is required.'] }],
    [{ page: 'javascript:alert(1)' }, { page: ['The page must be a valid URL.'] }],
    [
      { page: 'https://a.example/', 'event[value]': '5' },
      { 'event.name': ['The event.name field is required.'] },
    ],
    [
      { page: 'https://a.example/', 'event[name]': 'x', 'event[value]': '12345678901' },
      { 'event.value': ['The event.value field must be a positive integer of at most 10 digits.'] },
    ],
  ])('%j is a 422 with %j', (body, errors) => {
    expect(fields(body)).toEqual(errors);
  });
});

describe('the stats query', () => {
  const NOW = Date.UTC(2026, 10, 24, 12);
  test('defaults: the 30 days to today, sort max, per_page 10', () => {
    expect(parseStatsQuery({ name: 'pages' }, NOW)).toEqual({
      name: 'pages',
      range: { from: '2026-10-26', to: '2026-11-24' },
      search: undefined,
      sort: 'max',
      perPage: 10,
    });
  });

  test('from alone runs to today; to alone starts 29 days before it', () => {
    expect(parseStatsQuery({ name: 'pages', from: '2026-11-01' }, NOW).range).toEqual({
      from: '2026-11-01',
      to: '2026-11-24',
    });
    expect(parseStatsQuery({ name: 'pages', to: '2026-01-30' }, NOW).range).toEqual({
      from: '2026-01-01',
      to: '2026-01-30',
    });
  });

  test.each([
    [{ name: 'pages', per_page: '100', sort: 'min' }, 100, 'min'],
    [{ name: 'pages', per_page: '9', sort: 'MIN' }, 10, 'max'],
    [{ name: 'pages', per_page: ['20'] }, 10, 'max'],
  ])('%j: per_page %d, sort %s', (query, perPage, sort) => {
    expect(parseStatsQuery(query, NOW)).toMatchObject({ perPage, sort });
  });

  test('name=realtime: minutes 1–30, default 30; only realtime carries it', () => {
    expect(parseStatsQuery({ name: 'realtime' }, NOW)).toMatchObject({ name: 'realtime', minutes: 30 });
    expect(parseStatsQuery({ name: 'realtime', minutes: '1' }, NOW).minutes).toBe(1);
    expect(parseStatsQuery({ name: 'pages', minutes: '99' }, NOW).minutes).toBeUndefined();
    for (const minutes of ['0', '31', '-1', 'x', ['5']]) {
      expect(() => parseStatsQuery({ name: 'realtime', minutes }, NOW)).toThrow(HttpError);
    }
  });

  test('a repeated name or a search too long is a 422', () => {
    expect(() => parseStatsQuery({ name: ['pages', 'events'] }, NOW)).toThrow(HttpError);
    expect(() => parseStatsQuery({ name: 'pages', search: 'x'.repeat(256) }, NOW)).toThrow(HttpError);
  });
});

describe('properties of the rules', () => {
  const param = fc.constantFrom('a', 'b', 'utm_source', 'token', 'x');
  const value = fc.constantFrom('1', 'two', '', 'é');

  test('recordedPage keeps exactly the parameters not excluded, in order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(param, value), { maxLength: 6 }),
        fc.uniqueArray(param, { maxLength: 3 }),
        (pairs, excluded) => {
          const url = new URL('https://s.example/p');
          for (const [k, v] of pairs) url.searchParams.append(k, v);
          const page = recordedPage(url, excluded.length > 0 ? excluded.join('\n') : null);
          const kept = pairs.filter(([k]) => !excluded.includes(k));
          const expected = new URLSearchParams(kept).toString();
          expect(page).toBe(expected === '' ? '/p' : `/p?${expected}`);
        },
      ),
    );
  });

  test('a visitor exactly when the referrer is not an http(s) URL of the same host (www. aside)', () => {
    const host = fc.constantFrom(
      'shop.example',
      'www.shop.example',
      'SHOP.example',
      'other.example',
      'shop.example.evil',
    );
    const referrer = fc.oneof(
      fc
        .tuple(fc.constantFrom('https://', 'http://', 'ftp://'), host, fc.constantFrom('/', '/x?y=1'))
        .map((p) => p.join('')),
      fc.constantFrom('', 'garbage'),
    );
    fc.assert(
      fc.property(referrer, (ref) => {
        const verdict = classify(SITE, input({ referrer: ref }), () => null);
        const m = /^https?:\/\/([^/]+)/.exec(ref);
        const same = m !== null && m[1]!.toLowerCase().replace(/^www\./, '') === 'shop.example';
        expect(verdict.recorded && verdict.hit.visitor).toBe(!same);
        expect(verdict.recorded && verdict.hit.referrer).toBe(
          m === null || same ? null : m[1]!.toLowerCase().replace(/^www\./, ''),
        );
      }),
    );
  });
});
