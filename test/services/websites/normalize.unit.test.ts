import { describe, expect, test } from 'vitest';
import {
  asciiSearch,
  isIpOrCidr,
  isParamName,
  normaliseHost,
  normaliseLines,
  splitLines,
} from '../../../src/services/websites/normalize.js';

describe('normaliseHost', () => {
  test.each([
    ['https://www.Example.com/path?x', 'example.com'],
    ['http://example.com', 'example.com'],
    ['example.com', 'example.com'],
    ['EXAMPLE.com', 'example.com'],
    ['www.example.com', 'example.com'],
    ['WWW.Example.COM', 'example.com'],
    ['example.com:8080', 'example.com'],
    ['https://example.com:8443/a', 'example.com'],
    ['example.com/blog/post?x=1#top', 'example.com'],
    ['example.com?x', 'example.com'],
    ['example.com#x', 'example.com'],
    ['example.com.', 'example.com'],
    ['https://sub.www.example.com', 'sub.www.example.com'],
    ['www2.example.com', 'www2.example.com'],
    ['localhost', 'localhost'],
    ['localhost:3000', 'localhost'],
    ['www', 'www'],
    ['  padded.example  ', 'padded.example'],
    ['http://bücher.example', 'xn--bcher-kva.example'],
    ['192.0.2.1', '192.0.2.1'],
    ['http://192.0.2.1:8080/', '192.0.2.1'],
    ['http://[2001:db8::1]/', '[2001:db8::1]'],
    ['http://[2001:DB8::1]:8080', '[2001:db8::1]'],
    ['192.0.2.1.', '192.0.2.1'],
    ['http://WWW.xn--bcher-kva.de', 'xn--bcher-kva.de'],
    ['xn--a-1ga.example', 'xn--a-1ga.example'],
    // The WHATWG parser reads "\\" as "/" in http(s) URLs.
    ['http://example.com\\path', 'example.com'],
  ])('%j → %j', (input, host) => {
    expect(normaliseHost(input)).toBe(host);
  });

  test.each([
    '',
    '   ',
    'ftp://example.com',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'mailto:someone@example.com',
    'data:text/html,hi',
    'http://',
    'https:///path',
    '//example.com',
    '/relative/path',
    'not a host',
    'exa mple.com',
    'https://user:pw@example.com',
    'user@example.com',
    'example.com:port',
    'https://a..example.com',
    'https://.example.com',
    'https://-leading.example.com',
    'https://trailing-.example.com',
    `https://${'a'.repeat(64)}.example.com`,
    `${'abcdefghi.'.repeat(26)}com`,
    'http://[::g]/',
    'http://exa%20mple.com',
    'https:\\\\example.com',
    // Numeric hosts the WHATWG parser would read as other IPv4 addresses than written.
    '1.2.3',
    'http://1.2.3/',
    '127.1',
    '0x7f.1',
    'http://0x7f.1/',
    '0x7f.0.0.1',
    '010.0.0.1',
    '192.0.2.01',
    '4294967295',
    'http://%31%39%32.0.2.1/',
    'http://user@1.2.3/',
    // Nothing left after "www.".
    'www.',
    'http://WWW./',
    'www..',
    // Labels of letters, digits and hyphens only.
    '_._',
    'a_b.example',
    'http://_dmarc.example/',
    'http://bü_cher.example/',
  ])('%j is not a website', (input) => {
    expect(normaliseHost(input)).toBeUndefined();
  });
});

describe('splitLines', () => {
  test('trims each line and drops the empty ones, whatever the line ending', () => {
    expect(splitLines('  a \r\n\r\nb\rc\n\n  \n d')).toEqual(['a', 'b', 'c', 'd']);
  });

  test('nothing but blanks is no lines', () => {
    expect(splitLines(' \n\t\n')).toEqual([]);
  });
});

describe('isParamName', () => {
  test.each(['utm_source', 'fbclid', 'a', 'x[]', 'p.q', 'ñ', 'p'.repeat(255), '&'])(
    '%j is a name ("&" alone: every parameter)',
    (name) => {
      expect(isParamName(name)).toBe(true);
    },
  );

  test.each(['a b', 'a\tb', 'a=b', 'a&b', '&&', 'a?b', 'a#b', 'p'.repeat(256)])('%j is not', (name) => {
    expect(isParamName(name)).toBe(false);
  });
});

describe('isIpOrCidr', () => {
  test.each([
    '192.0.2.1',
    '0.0.0.0',
    '255.255.255.255',
    '10.0.0.0/8',
    '192.0.2.0/24',
    '0.0.0.0/0',
    '192.0.2.1/32',
    '::1',
    '2001:db8::1',
    '2001:DB8::/32',
    '::/0',
    '::ffff:192.0.2.1',
    '2001:db8::/128',
    '10.0.0.0/0',
    '2001:db8::/100',
  ])('%j is accepted', (line) => {
    expect(isIpOrCidr(line)).toBe(true);
  });

  test.each([
    '300.1.1.1',
    '1.2.3',
    '127.1',
    '0x7f.0.0.1',
    '01.2.3.4',
    '1.2.3.4.5',
    '10.0.0.0/33',
    '10.0.0.0/',
    '10.0.0.0/-1',
    '10.0.0.0/8/8',
    '1.2.3.4/08',
    '10.0.0.0/00',
    '10.0.0.0/008',
    '2001:db8::/032',
    '/8',
    '2001:db8::/129',
    'fe80::1%eth0',
    '2001:db8:::1',
    'example.com',
    'localhost',
  ])('%j is refused', (line) => {
    expect(isIpOrCidr(line)).toBe(false);
  });
});

describe('normaliseLines', () => {
  test('the valid lines, trimmed and joined with \\n', () => {
    expect(normaliseLines(' a \r\n\nb \n', isParamName)).toEqual({ ok: true, value: 'a\nb' });
  });

  test('no lines is null', () => {
    expect(normaliseLines('\n  \n', isParamName)).toEqual({ ok: true, value: null });
    expect(normaliseLines('', isIpOrCidr)).toEqual({ ok: true, value: null });
  });

  test('the first bad line, trimmed', () => {
    expect(normaliseLines('192.0.2.1\n  bad one \nworse', isIpOrCidr)).toEqual({
      ok: false,
      line: 'bad one',
    });
  });
});

describe('asciiSearch', () => {
  test.each([
    ['bücher', 'xn--bcher-kva'],
    ['bücher.de', 'xn--bcher-kva.de'],
    ['www.bücher.de', 'www.xn--bcher-kva.de'],
    ['r.bücher', 'r.xn--bcher-kva'],
    ['bücher。de', 'xn--bcher-kva.de'],
    ['BÜCHER', 'xn--bcher-kva'],
    // A part of a label converts too, but its punycode is not a part of the whole label's.
    ['büch', 'xn--bch-hoa'],
  ])('%j → %j', (term, ascii) => {
    expect(asciiSearch(term)).toBe(ascii);
  });

  test.each(['', 'example', 'xn--bcher-kva', 'a_b', '%', '１２３', 'a b ü'])(
    '%j has no other form',
    (term) => {
      expect(asciiSearch(term)).toBeUndefined();
    },
  );
});
