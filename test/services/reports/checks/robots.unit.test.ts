import { describe, expect, test } from 'vitest';
import { blockingRules, matches, robots, rulesFor } from '../../../../src/services/reports/checks/robots.js';

const URL_OF = (path: string) => `https://shop.example${path}`;

describe('robots.txt as RFC 9309 reads it', () => {
  test.each([
    ['/', '/anything', true],
    ['/private', '/private/x', true],
    ['/private', '/privates', true],
    ['/private', '/public', false],
    ['/*.pdf$', '/a/b.pdf', true],
    ['/*.pdf$', '/a/b.pdf?x=1', false],
    ['/a*c', '/abbbc/d', true],
    ['/a*c', '/abbb', false],
    ['/search?q=', '/search?q=shoes', true],
    ['/exact$', '/exact', true],
    ['/exact$', '/exactly', false],
    ['*', '/', true],
  ])('%s matches %s: %s', (pattern, path, expected) => {
    expect(matches(pattern, path)).toBe(expected);
  });

  test('many wildcards against a long path stay quick (no backtracking blow-up)', () => {
    expect(matches(`/${'a*'.repeat(200)}b`, `/${'a'.repeat(2000)}`)).toBe(false);
  });

  test('our group if named, else *; groups of one name merge; comments and other lines ignored', () => {
    const text = [
      '# shop',
      'User-agent: *',
      'Disallow: /cart # no carts',
      'Sitemap: https://shop.example/sitemap.xml',
      '',
      'User-agent: Googlebot',
      'User-agent: *',
      'Disallow: /tmp',
      'Allow: /tmp/ok',
    ].join('\r\n');
    expect(rulesFor(text, 'tollgate-analyzer')).toEqual([
      { allow: false, pattern: '/cart' },
      { allow: false, pattern: '/tmp' },
      { allow: true, pattern: '/tmp/ok' },
    ]);
    const ours = `${text}\nUser-agent: tollgate-analyzer\nDisallow: /only-ours\n`;
    expect(rulesFor(ours, 'tollgate-analyzer')).toEqual([{ allow: false, pattern: '/only-ours' }]);
  });

  test('the longest match wins, Allow on a tie; an empty Disallow allows all', () => {
    const text = 'User-agent: *\nDisallow: /shop\nAllow: /shop/public\nDisallow: /x\nAllow: /x\nDisallow:\n';
    expect(blockingRules(text, URL_OF('/shop/cart'))).toEqual(['/shop']);
    expect(blockingRules(text, URL_OF('/shop/public/a'))).toEqual([]);
    expect(blockingRules(text, URL_OF('/x'))).toEqual([]);
    expect(blockingRules(text, URL_OF('/other'))).toEqual([]);
    // Every matching Disallow rule is named when the page is blocked.
    expect(blockingRules('User-agent: *\nDisallow: /\nDisallow: /a\n', URL_OF('/a/b'))).toEqual(['/', '/a']);
  });
});

describe('the robots check, in the originals shape', () => {
  test('no robots.txt, or one that allows the page: passed, value null', () => {
    expect(robots(null, URL_OF('/'))).toEqual({ passed: true, importance: 'high', value: null });
    expect(robots('User-agent: *\nDisallow: /admin\n', URL_OF('/'))).toEqual({
      passed: true,
      importance: 'high',
      value: null,
    });
  });

  test('blocked: failed lists the rules', () => {
    expect(robots('User-agent: *\nDisallow: /\n', URL_OF('/pricing'))).toEqual({
      passed: false,
      importance: 'high',
      value: null,
      errors: { failed: ['/'] },
    });
  });
});
