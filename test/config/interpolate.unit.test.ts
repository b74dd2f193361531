import { describe, expect, test } from 'vitest';
import { interpolate, isWholeReference, references } from '../../src/config/interpolate.js';

const env = { A: 'a', EMPTY: '', URL: 'https://Analyzer.Example.com:8443', BAD: 'not a url' };

describe('interpolate: nested defaults and a URL host', () => {
  test.each([
    ['${MISSING:-${A}}', 'a'],
    ['${MISSING:-${OTHER:-deep}}', 'deep'],
    ['${A:-${MISSING}}', 'a'],
    ['x-${MISSING:-http://${A:-b}:8080}-y', 'x-http://a:8080-y'],
    ['${URL.host}', 'analyzer.example.com'],
    ['${MISSING.host:-fallback}', 'fallback'],
    ['${EMPTY.host:-fallback}', 'fallback'],
    ['${MISSING:-${URL.host:-x}}', 'analyzer.example.com'],
    ['${MISSING:-$${A}}', '${A}'],
    ['${MISSING:-a}}', 'a}'],
    // Not references: kept as written.
    ['${A', '${A'],
    ['${A:-${A}', '${A:-a'],
    ['${A.port}', '${A.port}'],
  ])('%s', (text, expected) => {
    expect(interpolate(text, env)).toBe(expected);
  });

  test('a default that is not used is not read; one that is used must resolve', () => {
    expect(interpolate('${A:-${NOWHERE}}', env)).toBe('a');
    expect(() => interpolate('${MISSING:-${NOWHERE}}', env)).toThrow(
      'environment variable NOWHERE is not set and has no default',
    );
  });

  test('the host of a value that is no URL is an error that names it', () => {
    expect(() => interpolate('${BAD.host}', env)).toThrow(
      'environment variable BAD is not a URL with a host: "not a url" (use e.g. https://api.example.com)',
    );
  });

  test('a whole reference, nested or not', () => {
    expect(isWholeReference('${A:-${B:-1}}')).toBe(true);
    expect(isWholeReference('${URL.host}')).toBe(true);
    expect(isWholeReference('${A}x')).toBe(false);
    expect(isWholeReference('$${A}')).toBe(false);
  });

  test('references lists the nested ones after theirs', () => {
    expect(references('${R:-http://${H:-${U.host:-x}}:8080}')).toEqual([
      { name: 'R', host: false, fallback: 'http://${H:-${U.host:-x}}:8080' },
      { name: 'H', host: false, fallback: '${U.host:-x}' },
      { name: 'U', host: true, fallback: 'x' },
    ]);
  });
});
