import type { FastifyRequest } from 'fastify';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { listAddress, listPage, MAX_PAGE, pageNumber } from '../../../src/services/kit/pagination.js';

/** A request as the list route sees it: the route's path, the URL as sent, and forged headers. */
const fakeRequest = (route: string, url: string) =>
  ({
    url,
    routeOptions: { url: route },
    headers: { host: 'evil.example', 'x-forwarded-proto': 'gopher', 'x-forwarded-host': 'evil.example' },
  }) as unknown as FastifyRequest;

/** The address of `url` (a path with its query) behind http://api.example. */
const request = (url: string, publicUrl = 'http://api.example') =>
  listAddress(fakeRequest(url.split('?')[0]!, url), publicUrl);

describe('the list envelope', () => {
  test('links keep the query, carry sort and per_page, set page, and meta counts the slice', () => {
    const page = listPage(
      request('/api/v1/websites?search=a%20b&sort=desc&page=2&per_page=10'),
      [11, 12],
      12,
      2,
      10,
      'desc',
    );
    const base = 'http://api.example/api/v1/websites?search=a+b&sort=desc&per_page=10&page=';
    expect(page).toEqual({
      data: [11, 12],
      links: { first: `${base}1`, last: `${base}2`, prev: `${base}1`, next: null },
      meta: {
        current_page: 2,
        from: 11,
        last_page: 2,
        path: 'http://api.example/api/v1/websites',
        per_page: 10,
        to: 12,
        total: 12,
      },
      status: 200,
    });
  });

  test('an empty list has one page and no from/to', () => {
    const page = listPage(request('/api/v1/reports', 'https://a.example'), [], 0, 1, 25, 'desc');
    expect(page.links).toEqual({
      first: 'https://a.example/api/v1/reports?sort=desc&per_page=25&page=1',
      last: 'https://a.example/api/v1/reports?sort=desc&per_page=25&page=1',
      prev: null,
      next: null,
    });
    expect(page.meta).toMatchObject({ from: null, to: null, last_page: 1, total: 0 });
  });

  test('for any total, page and size, meta is consistent', () => {
    fc.assert(
      fc.property(
        fc.nat(1000),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 10, max: 100 }),
        (total, p, per) => {
          const count = Math.max(0, Math.min(per, total - (p - 1) * per));
          const { meta, links } = listPage(
            request('/x'),
            Array.from({ length: count }, (_, i) => i),
            total,
            p,
            per,
            'asc',
          );
          expect(meta.last_page).toBe(Math.max(1, Math.ceil(total / per)));
          expect(links.next === null).toBe(p >= meta.last_page);
          expect(links.prev === null).toBe(p === 1);
          if (count === 0) expect([meta.from, meta.to]).toEqual([null, null]);
          else expect([meta.from, meta.to]).toEqual([(p - 1) * per + 1, (p - 1) * per + count]);
        },
      ),
    );
  });

  test('page numbers: a positive integer, else 1', () => {
    expect(['3', '1', '0', '-2', 'x', '2.5', undefined, ['2']].map(pageNumber)).toEqual([
      3, 1, 1, 1, 1, 1, 1, 1,
    ]);
  });

  test('a page number above MAX_PAGE reads as MAX_PAGE (1e9): exact, whatever the digits', () => {
    expect(MAX_PAGE).toBe(1e9);
    expect(
      [
        '999999999',
        '1000000000',
        '1000000001',
        '100000000000000000000',
        '9'.repeat(400),
        `0${'9'.repeat(20)}`,
      ].map(pageNumber),
    ).toEqual([999_999_999, 1e9, 1e9, 1e9, 1e9, 1e9]);
  });

  test('the envelope of a clamped page: safe integers in meta and links', () => {
    const page = listPage(
      request('/x?page=100000000000000000000'),
      [],
      5,
      pageNumber('100000000000000000000'),
      10,
      'asc',
    );
    expect(page.meta).toMatchObject({ current_page: 1e9, from: null, to: null, last_page: 1, total: 5 });
    expect(page.links.prev).toBe('http://api.example/x?sort=asc&per_page=10&page=999999999');
    expect(page.links.next).toBeNull();
  });
});

describe('the list address', () => {
  test('the configured public URL and the route path; no header of the request', () => {
    expect(
      listAddress(fakeRequest('/api/v1/websites', '/api/v1/websites?sort=desc'), 'https://x.example'),
    ).toEqual({ path: 'https://x.example/api/v1/websites', query: 'sort=desc' });
  });

  test('no public URL: the path alone, so the links are relative', () => {
    const address = listAddress(fakeRequest('/api/v1/reports', '/api/v1/reports?page=2'), '');
    expect(address).toEqual({ path: '/api/v1/reports', query: 'page=2' });
    expect(listPage(address, [], 30, 2, 10, 'desc').links).toEqual({
      first: '/api/v1/reports?sort=desc&per_page=10&page=1',
      last: '/api/v1/reports?sort=desc&per_page=10&page=3',
      prev: '/api/v1/reports?sort=desc&per_page=10&page=1',
      next: '/api/v1/reports?sort=desc&per_page=10&page=3',
    });
  });

  test('the route path, not the path as the client spelled it', () => {
    // Say a router that decodes or folds slashes matched this spelling: the link still names the route.
    const address = listAddress(fakeRequest('/api/v1/websites', '//evil.example/%2e%2e/websites?a=1'), '');
    expect(address).toEqual({ path: '/api/v1/websites', query: 'a=1' });
  });

  test('a route with parameters is refused (the links would not name its list)', () => {
    expect(() => listAddress(fakeRequest('/api/v1/websites/:id', '/api/v1/websites/3'), '')).toThrow(
      'a list route has a fixed path',
    );
  });
});
