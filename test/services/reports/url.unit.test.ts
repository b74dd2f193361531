import { describe, expect, test } from 'vitest';
import { displayUrl, parsePageUrl, projectOf } from '../../../src/services/reports/url.js';

describe('report URLs', () => {
  test.each([
    ['https://www.example.com/', 'example.com', 'example.com'],
    ['https://example.com', 'example.com', 'example.com'],
    ['https://example.com/a/', 'example.com/a/', 'example.com'],
    ['http://www.Example.COM/Path?q=1#frag', 'example.com/Path?q=1', 'example.com'],
    ['https://example.com/?q=1', 'example.com/?q=1', 'example.com'],
    ['http://127.0.0.1:8080/good', '127.0.0.1:8080/good', '127.0.0.1'],
    ['https://www.example.com:8443/', 'example.com:8443', 'example.com'],
    ['https://wwwexample.com/', 'wwwexample.com', 'wwwexample.com'],
  ])('%s shows as %s in project %s', (href, shown, project) => {
    expect(displayUrl(href)).toBe(shown);
    expect(projectOf(href)).toBe(project);
  });

  test('only absolute http(s) URLs with a host are accepted', () => {
    expect(parsePageUrl(' https://example.com/a ')?.href).toBe('https://example.com/a');
    for (const bad of [
      'example.com',
      'ftp://example.com/',
      'javascript:alert(1)',
      'http://',
      '/path',
      'mailto:a@b.c',
      'http://user:pass@example.com/',
      'http://user@example.com/',
      'https://:secret@example.com/',
      'http://user:@example.com/',
    ]) {
      expect(parsePageUrl(bad), bad).toBeUndefined();
    }
  });
});
