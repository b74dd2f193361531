import { describe, expect, test } from 'vitest';
import { CHECK_NAMES, type CheckResult } from '../../../src/services/reports/checks/types.js';
import {
  bytesText,
  CHECK_TEXTS,
  issueTexts,
  orderedChecks,
  valueText,
} from '../../../src/services/reports/explain.js';
import { badResults, decentResults } from '../../helpers/test-pages.js';

const ok = (value: CheckResult['value'], importance: CheckResult['importance'] = 'medium'): CheckResult => ({
  passed: true,
  importance,
  value,
});

describe('the report page in words', () => {
  test('every check has a title, a meaning and what to do', () => {
    for (const name of CHECK_NAMES) {
      expect(CHECK_TEXTS[name], name).toEqual({
        title: expect.any(String),
        means: expect.any(String),
        todo: expect.any(String),
      });
    }
    expect(CHECK_NAMES).toHaveLength(18);
  });

  test.each([
    ['headings', ok({ h1: ['Pricing'] }), '1 heading: Pricing'],
    ['headings', ok({ h1: ['Pricing'], h2: ['Plans', 'FAQ'] }), '3 headings: h1 Pricing; h2 Plans, FAQ'],
    ['headings', ok({}), 'No headings'],
    ['load_time', ok(0.02), '20 ms'],
    ['load_time', ok(2.5), '2.5 s'],
    ['page_size', ok(714), '714 B'],
    ['page_size', ok(12_400), '12.4 kB'],
    ['in_page_links', ok({ internal: 4, external: 0 }), '4 links to this site, 0 links elsewhere'],
    ['in_page_links', ok({ internal: 1, external: 1 }), '1 link to this site, 1 link elsewhere'],
    ['image_keywords', ok(3), '3 images'],
    ['dom_size', ok(1_600), '1,600 elements'],
    ['text_compression', ok('br'), 'Compressed (br)'],
    ['text_compression', ok(null), 'Not compressed'],
    ['deprecated_html_tags', ok({ center: 1, font: 2 }), '<center> ×1, <font> ×2'],
    ['deprecated_html_tags', ok({}), 'None'],
    [
      'structured_data',
      ok({ json_ld: 1, microdata: 0, open_graph: 3 }),
      '1 JSON-LD block, 3 Open Graph tags',
    ],
    ['structured_data', ok({ json_ld: 0, microdata: 0, open_graph: 0 }), 'None'],
    ['title', ok('Acme tools'), 'Acme tools'],
    ['meta_description', ok(null), 'Missing'],
    ['noindex', ok(null, 'high'), 'No noindex directive'],
    ['robots', ok(null, 'high'), 'Crawlers may fetch the page'],
    ['https_encryption', ok('https://a.example/', 'high'), 'Served over HTTPS'],
  ])('%s %j reads "%s"', (name, check, expected) => {
    expect(valueText(name, check)).toBe(expected);
  });

  test('bytes in SI units', () => {
    expect([0, 999, 1000, 330_000, 1_234_567].map(bytesText)).toEqual([
      '0 B',
      '999 B',
      '1.0 kB',
      '330.0 kB',
      '1.2 MB',
    ]);
  });

  test('the findings of failed checks, in words', () => {
    const base = 'http://pages.test';
    const bad = badResults(base) as Record<string, CheckResult>;
    const decent = decentResults(base) as Record<string, CheckResult>;
    expect(issueTexts('title', bad.title!)).toEqual([]);
    expect(issueTexts('headings', bad.headings!)).toEqual(['The page has no <h1>.']);
    expect(issueTexts('headings', decent.headings!)).toEqual(['2 <h1>s: there should be one.']);
    expect(issueTexts('image_keywords', decent.image_keywords!)).toEqual([
      `2 images without alt text: ${base}/one.png, ${base}/two.png`,
    ]);
    expect(issueTexts('noindex', bad.noindex!)).toEqual([
      'Asks search engines not to index the page: “noindex, nofollow”.',
    ]);
    expect(issueTexts('deprecated_html_tags', bad.deprecated_html_tags!)).toEqual([
      'Obsolete elements: <font>.',
    ]);
    expect(
      issueTexts('robots', {
        passed: false,
        importance: 'high',
        value: null,
        errors: { failed: ['/', '/a'] },
      }),
    ).toEqual(['Blocked by: Disallow: /, Disallow: /a.']);
    expect(
      issueTexts('load_time', { passed: false, importance: 'medium', value: 3.2, errors: { too_slow: 3.2 } }),
    ).toEqual(['3.2 s: slower than 2 s.']);
    expect(
      issueTexts('title', { passed: false, importance: 'high', value: 'x', errors: { too_long: 70 } }),
    ).toEqual(['70 characters: longer than 60.']);
    expect(issueTexts('title', ok('fine'))).toEqual([]);
  });

  test('failed checks first, the more important first; passed ones in their order', () => {
    const order = orderedChecks(decentResults('http://pages.test') as Record<string, CheckResult>).map(
      ([n]) => n,
    );
    expect(order).toEqual([
      'meta_description',
      'headings',
      'https_encryption',
      'image_keywords',
      'favicon',
      'deprecated_html_tags',
      'title',
      'meta_viewport',
      'charset',
      'language',
      'noindex',
      'robots',
      'in_page_links',
      'text_compression',
      'load_time',
      'page_size',
      'dom_size',
      'structured_data',
    ]);
  });
});
