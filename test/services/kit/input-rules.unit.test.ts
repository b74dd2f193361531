import type { FastifyRequest } from 'fastify';
import { describe, expect, test } from 'vitest';
import { presentedApiKey } from '../../../src/services/accounts/accounts.js';
import { orDefault } from '../../../src/services/kit/fields.js';
import { mergedInput } from '../../../src/services/kit/input.js';
import { laravelTime } from '../../../src/services/kit/laravel-time.js';
import { z } from 'zod';

describe('mergedInput: the query under the body, as Laravel input()', () => {
  test('the body wins a clash; the query fills the rest', () => {
    expect(mergedInput({ url: 'q', email: '1' }, { url: 'b' })).toEqual({ url: 'b', email: '1' });
  });

  test('no body: the query alone; no query: the body alone', () => {
    expect(mergedInput({ a: '1' }, undefined)).toEqual({ a: '1' });
    expect(mergedInput({ a: '1' }, null)).toEqual({ a: '1' });
    expect(mergedInput(undefined, { b: '2' })).toEqual({ b: '2' });
  });

  test('a body that is not an object of fields is left for the route to refuse', () => {
    expect(mergedInput({ a: '1' }, ['x'])).toEqual(['x']);
    expect(mergedInput({ a: '1' }, 'text')).toBe('text');
  });

  test('a "__proto__" field stays a plain field', () => {
    const merged = mergedInput({}, JSON.parse('{"__proto__":{"polluted":true}}')) as Record<string, unknown>;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
  });
});

describe('laravelTime: microseconds, as Laravel serialises a date', () => {
  test.each([
    ['2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000000Z'],
    ['2026-11-24T17:22:37.827Z', '2026-11-24T17:22:37.827000Z'],
    ['2026-11-24T17:22:37Z', '2026-11-24T17:22:37.000000Z'],
    ['2026-11-24T17:22:37.123456Z', '2026-11-24T17:22:37.123456Z'],
    ['not a time', 'not a time'],
  ])('%s → %s', (stored, shown) => {
    expect(laravelTime(stored)).toBe(shown);
  });
});

describe('presentedApiKey: where Laravel’s token guard looks, in its order', () => {
  const request = (query: unknown, body: unknown, authorization?: string) =>
    ({ query, body, headers: authorization ? { authorization } : {} }) as unknown as FastifyRequest;

  test('query, then body, then Bearer', () => {
    expect(presentedApiKey(request({ api_token: 'q' }, { api_token: 'b' }, 'Bearer h'))).toBe('q');
    expect(presentedApiKey(request({}, { api_token: 'b' }, 'Bearer h'))).toBe('b');
    expect(presentedApiKey(request({}, {}, 'Bearer h'))).toBe('h');
  });

  test('an empty or repeated api_token is not a key: the next place is read', () => {
    expect(presentedApiKey(request({ api_token: '' }, { api_token: ['a', 'b'] }, 'Bearer h'))).toBe('h');
    expect(presentedApiKey(request({ api_token: '' }, undefined))).toBeUndefined();
  });

  test('a body that is not an object (text, an array) holds no key', () => {
    expect(presentedApiKey(request({}, 'api_token=x'))).toBeUndefined();
    expect(presentedApiKey(request({}, [{ api_token: 'x' }]))).toBeUndefined();
  });
});

describe('orDefault: a list parameter the original reads leniently', () => {
  const sort = orDefault(z.enum(['asc', 'desc']), 'desc', { type: 'string', enum: ['asc', 'desc'] });

  test('a known value is kept; anything else, absent included, is the default', () => {
    expect(['asc', 'desc', 'foo', '', undefined, ['asc'], 3].map((v) => sort.parse(v))).toEqual([
      'asc',
      'desc',
      'desc',
      'desc',
      'desc',
      'desc',
      'desc',
    ]);
  });
});
