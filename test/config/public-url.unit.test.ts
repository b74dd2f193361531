// services.websites.publicUrl / services.reports.publicUrl: what the config accepts, and what it refuses.
import { describe, expect, test } from 'vitest';
import { loadConfigText } from '../../src/rules/load.js';
import { parsePublicUrl } from '../../src/config/public-url.js';
import { configErrorOf } from '../helpers/config-errors.js';
import { DEFAULT_CONFIG } from '../helpers/default-config.js';

const BASE_ENV = { HOST: '127.0.0.1', PORT: '0', ADMIN_PORT: '0' };

describe('a public URL', () => {
  test.each([
    ['https://api.example.com', 'https://api.example.com'],
    ['https://api.example.com/', 'https://api.example.com'],
    ['  http://localhost:8080/  ', 'http://localhost:8080'],
    ['HTTPS://API.Example.COM', 'https://api.example.com'],
    ['https://api.example.com:443/', 'https://api.example.com'],
    ['http://api.example.com:80', 'http://api.example.com'],
    ['http://[::1]:8080', 'http://[::1]:8080'],
    ['https://bücher.example', 'https://xn--bcher-kva.example'],
    ['', ''],
    ['   ', ''],
  ])('%j reads as %j', (input, expected) => {
    expect(parsePublicUrl(input)).toBe(expected);
  });

  test.each([
    ['api.example.com', 'not a URL: "api.example.com" (use e.g. https://api.example.com)'],
    ['ftp://api.example.com', 'must be an http or https URL, got "ftp://api.example.com"'],
    ['javascript:alert(1)', 'must be an http or https URL, got "javascript:alert(1)"'],
    ['https://user:pw@api.example.com', 'must not hold credentials: "https://user:pw@api.example.com"'],
    [
      'https://api.example.com/v1',
      'must be a scheme and host only (no path, query or fragment), got "https://api.example.com/v1"',
    ],
    [
      'https://api.example.com/?a=1',
      'must be a scheme and host only (no path, query or fragment), got "https://api.example.com/?a=1"',
    ],
    [
      'https://api.example.com?',
      'must be a scheme and host only (no path, query or fragment), got "https://api.example.com?"',
    ],
    [
      'https://api.example.com#top',
      'must be a scheme and host only (no path, query or fragment), got "https://api.example.com#top"',
    ],
  ])('%j is refused', (input, message) => {
    expect(() => parsePublicUrl(input)).toThrow(message);
  });
});

describe('in the config', () => {
  test('the shipped config reads WEBSITES_PUBLIC_URL and REPORTS_PUBLIC_URL', () => {
    const { config } = loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', {
      ...BASE_ENV,
      WEBSITES_PUBLIC_URL: 'https://stats.example.com/',
      REPORTS_PUBLIC_URL: 'https://analyzer.example.com',
    });
    expect(config.services.websites).toEqual({ publicUrl: 'https://stats.example.com' });
    expect(config.services.reports.publicUrl).toBe('https://analyzer.example.com');
  });

  test('unset, they default to the local addresses of the shipped listener', () => {
    const { config } = loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', BASE_ENV);
    expect(config.services.websites.publicUrl).toBe('http://localhost:8080');
    expect(config.services.reports.publicUrl).toBe('http://analyzer.localhost:8080');
  });

  test('absent from a config: empty, so the links are paths', () => {
    const { config } = loadConfigText(
      'listeners: [{ port: 0 }]\nupstreams: { w: { embedded: websites } }\nroutes: [{ name: all, paths: ["/*"], upstream: w }]\n',
      'c.yaml',
      {},
    );
    expect(config.services.websites.publicUrl).toBe('');
    expect(config.services.reports.publicUrl).toBe('');
  });

  test('a bad one is a config error naming the field and its line', () => {
    expect(
      configErrorOf(DEFAULT_CONFIG, { ...BASE_ENV, WEBSITES_PUBLIC_URL: 'https://x.example/api' }),
    ).toMatch(
      /^conf\.yaml:\d+:\d+: services\.websites\.publicUrl: must be a scheme and host only \(no path, query or fragment\), got "https:\/\/x\.example\/api"$/,
    );
    // REPORTS_PUBLIC_URL's host names the reports routes' host too: the first reference that needs
    // that host reports the bad value, naming the variable the operator set.
    expect(configErrorOf(DEFAULT_CONFIG, { ...BASE_ENV, REPORTS_PUBLIC_URL: 'analyzer.example' })).toMatch(
      /^conf\.yaml:\d+:\d+: routes\[0\]\.hosts\[0\]: environment variable REPORTS_PUBLIC_URL is not a URL with a host: "analyzer\.example" \(use e\.g\. https:\/\/api\.example\.com\)$/,
    );
  });
});
