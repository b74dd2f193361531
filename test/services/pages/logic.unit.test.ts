import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  isUnlocked,
  pageAccess,
  safeNext,
  sameOrigin,
  sessionUser,
  sessionValue,
  unlockValue,
  type Guarded,
} from '../../../src/services/pages/access.js';
import { csv, csvField } from '../../../src/services/kit/csv.js';
import { escapeHtml, html, jsonData } from '../../../src/services/pages/html.js';
import { parseRange } from '../../../src/services/websites/pages/range.js';
import { sectionFor } from '../../../src/services/websites/pages/sections.js';
import { dimensionPage, share } from '../../../src/services/websites/pages/stats-view.js';

const NOW = Date.parse('2026-11-24T16:00:00Z');

describe('html', () => {
  test('interpolated text is escaped, Html is not', () => {
    const payload = `<script>alert("x")</script>&'`;
    expect(html`<td title="${payload}">${payload}</td>`.text).toBe(
      '<td title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</td>',
    );
    expect(html`<p>${html`<b>${'<i>'}</b>`}</p>`.text).toBe('<p><b>&lt;i&gt;</b></p>');
    expect(html`${['a<', 1, null, undefined, false]}`.text).toBe('a&lt;1');
  });

  test('no escaped string holds a markup character', () => {
    fc.assert(fc.property(fc.string(), (s) => !/[<>"']/.test(escapeHtml(s))));
  });

  test('a JSON data block cannot be closed by a value', () => {
    const block = jsonData({ v: '</script><script>alert(1)</script>&\u2028' }).text;
    expect(block).not.toMatch(/[<>&\u2028]/);
    expect(JSON.parse(block)).toEqual({ v: '</script><script>alert(1)</script>&\u2028' });
  });
});

describe('csv', () => {
  test('fields with commas, quotes and line breaks are quoted; formulas are defused', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('-1')).toBe("'-1");
    expect(csvField(-1)).toBe('-1');
    expect(csv(['value', 'count'], [['/a', 2]])).toBe('value,count\r\n/a,2\r\n');
  });
});

describe('date range', () => {
  test('defaults to the last 30 days, today included', () => {
    expect(parseRange({}, NOW)).toEqual({ ok: true, range: { from: '2026-10-26', to: '2026-11-24' } });
    expect(parseRange({ to: '2026-03-01' }, NOW)).toEqual({
      ok: true,
      range: { from: '2026-01-31', to: '2026-03-01' },
    });
    expect(parseRange({ from: '2026-11-01', to: '2026-11-02' }, NOW)).toEqual({
      ok: true,
      range: { from: '2026-11-01', to: '2026-11-02' },
    });
  });

  test.each([
    [{ from: '2026-02-30' }, 'The start date must be a date (YYYY-MM-DD).'],
    [{ to: 'yesterday' }, 'The end date must be a date (YYYY-MM-DD).'],
    [{ from: '2026-11-03', to: '2026-11-02' }, 'The start date must not be after the end date.'],
    [{ from: '2024-01-01', to: '2026-01-01' }, 'A range may span at most 367 days.'],
  ])('%j is refused: %s', (query, error) => {
    expect(parseRange(query, NOW)).toEqual({
      ok: false,
      error,
      range: { from: '2026-10-26', to: '2026-11-24' },
    });
  });
});

describe('access', () => {
  const site = (privacy: number, passwordHash: string | null = 'scrypt$h'): Guarded => ({
    id: 7,
    userId: 1,
    privacy,
    passwordHash,
  });

  test.each([
    [0, undefined, false, 'show'],
    [1, 1, false, 'show'],
    [1, undefined, false, 'hidden'],
    [1, 2, true, 'hidden'],
    [2, undefined, false, 'password'],
    [2, 2, true, 'show'],
    [2, 1, false, 'show'],
  ] as const)('privacy %i, viewer %s, unlocked %s: %s', (privacy, viewer, unlocked, access) => {
    expect(pageAccess(site(privacy), viewer, unlocked)).toBe(access);
  });

  test('a password page without a password is hidden', () => {
    expect(pageAccess(site(2, null), undefined, false)).toBe('hidden');
  });

  test('a session ends at its expiry, and carries the tag of its key', () => {
    const tag = 'AbCd_-0123456789';
    expect(sessionUser(sessionValue(3, NOW + 1, tag), NOW)).toEqual({ user: 3, keyTag: tag });
    expect(sessionUser(sessionValue(3, NOW, tag), NOW)).toBeUndefined();
    expect(sessionUser(`s.3.${NOW + 1}`, NOW)).toBeUndefined();
    expect(sessionUser('s.3', NOW)).toBeUndefined();
  });

  test('an unlock holds for its page, kind, password and lifetime only', () => {
    const value = unlockValue('w', site(2), NOW + 1000);
    expect(isUnlocked(value, 'w', site(2), NOW)).toBe(true);
    expect(isUnlocked(value, 'r', site(2), NOW)).toBe(false);
    expect(isUnlocked(value, 'w', { ...site(2), id: 8 }, NOW)).toBe(false);
    expect(isUnlocked(value, 'w', site(2, 'scrypt$other'), NOW)).toBe(false);
    expect(isUnlocked(value, 'w', site(2), NOW + 1000)).toBe(false);
  });

  test('same origin: Origin, else Referer, must name the host', () => {
    expect(sameOrigin('http://stats.example:8080', undefined, 'stats.example:8080')).toBe(true);
    expect(sameOrigin('http://evil.example', undefined, 'stats.example')).toBe(false);
    expect(sameOrigin(undefined, 'http://stats.example/x', 'stats.example')).toBe(true);
    expect(sameOrigin('null', 'http://evil.example/', 'stats.example')).toBe(false);
    expect(sameOrigin(undefined, undefined, 'stats.example')).toBe(false);
    expect(sameOrigin('not a url', undefined, 'stats.example')).toBe(false);
  });

  test('the next path stays on the site', () => {
    expect(safeNext('/example.com/pages?from=2026-01-01', '/')).toBe('/example.com/pages?from=2026-01-01');
    for (const bad of ['//evil.example', '/\\evil.example', 'https://evil.example', '', 42, '/a b'])
      expect(safeNext(bad, '/')).toBe('/');
    // A Location header takes no control character and nothing past U+00FF: such a path would
    // make the redirect throw (a 500), so it falls back like any other bad one.
    for (const bad of ['/a\u0001b', '/a\u007f', '/\u0100x', '/caf\u00e9'])
      expect(safeNext(bad, '/x')).toBe('/x');
  });
});

test('shares have one decimal', () => {
  expect(share(1, 3)).toBe('33.3%');
  expect(share(2, 2)).toBe('100.0%');
  expect(share(0, 0)).toBe('0%');
});

test('the page links and the CSV link of a dimension table keep its search, URL-encoded', () => {
  const frame = {
    domain: 'shop.example',
    signedIn: false,
    here: '/shop.example/pages?page=2',
    range: { from: '2026-11-01', to: '2026-11-24' },
    section: sectionFor('pages')!,
    search: 'a&b "c"',
  };
  const top = { rows: [{ value: '/a&b "c"', count: 1 }], total: 250, sum: 250 };
  const text = dimensionPage(frame, top, 2, frame.search).text;
  const q = '?from=2026-11-01&amp;to=2026-11-24&amp;search=a%26b%20%22c%22';
  expect(text).toContain(`<a href="/shop.example/pages${q}&page=1" rel="prev">Previous</a>`);
  expect(text).toContain(`<a href="/shop.example/pages${q}&page=3" rel="next">Next</a>`);
  expect(text).toContain(`<a href="/shop.example/pages.csv${q}" download>Download CSV</a>`);
  expect(text).toContain(
    '<input type="search" name="search" value="a&amp;b &quot;c&quot;" maxlength="255" />',
  );
});
