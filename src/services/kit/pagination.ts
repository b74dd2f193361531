import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { documentAs } from './json-schema.js';

/** A page of a list in the Laravel originals' envelope (LengthAwarePaginator + the `status` member). */
export interface ListPage<T> {
  data: T[];
  links: { first: string; last: string; prev: string | null; next: string | null };
  meta: {
    current_page: number;
    from: number | null;
    last_page: number;
    path: string;
    per_page: number;
    to: number | null;
    total: number;
  };
  status: 200;
}

/** The highest page number read: past any real list, and far below Number.MAX_SAFE_INTEGER. */
export const MAX_PAGE = 1_000_000_000;

/**
 * The requested page: a positive integer, else 1 (as Laravel reads it). A number above MAX_PAGE
 * reads as MAX_PAGE (an empty page past the last one, as any page beyond it): the page number and
 * the links built from it stay exact integers, however many digits the client sent.
 */
export function pageNumber(value: unknown): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : 1;
  return n >= 1 ? Math.min(n, MAX_PAGE) : 1;
}

/** The `page` query parameter as pageNumber reads it, for the OpenAPI document. */
export const pageField = documentAs(z.unknown().optional().transform(pageNumber), {
  type: 'integer',
  minimum: 1,
  default: 1,
}).meta({
  description: `Page number; anything but a positive integer reads as 1, a number above ${MAX_PAGE} as ${MAX_PAGE}.`,
});

/** Where a list's links point: its public URL (no query), and the request's query string. */
export interface ListAddress {
  readonly path: string;
  readonly query: string;
}

/**
 * The address of the list a request asked for: the service's configured public base URL (empty: the
 * links are paths alone) and the route's own path. Neither the Host header nor X-Forwarded-* nor the
 * path as the client spelled it goes into a link: a forged one could point the links elsewhere.
 */
export function listAddress(request: FastifyRequest, publicUrl: string): ListAddress {
  const route = request.routeOptions.url;
  if (route === undefined || route.includes(':')) throw new Error('a list route has a fixed path');
  const q = request.url.indexOf('?');
  return { path: `${publicUrl}${route}`, query: q === -1 ? '' : request.url.slice(q + 1) };
}

/**
 * Wraps one page of rows. The links keep the request's query parameters (search, filters), set
 * `page`, and always carry the `sort` and `per_page` in force (as the originals' `appends()` do),
 * whether the client sent them, left them out or sent one that fell back to the default.
 */
export function listPage<T>(
  address: ListAddress,
  rows: T[],
  total: number,
  page: number,
  perPage: number,
  sort: string,
): ListPage<T> {
  const { path } = address;
  const query = new URLSearchParams(address.query);
  query.delete('page');
  // A key given as ?api_token= (see accounts.ts) never goes into a link.
  query.delete('api_token');
  query.set('sort', sort);
  query.set('per_page', String(perPage));
  const link = (n: number) => {
    const params = new URLSearchParams(query);
    params.set('page', String(n));
    return `${path}?${params.toString()}`;
  };
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const from = rows.length > 0 ? (page - 1) * perPage + 1 : null;
  return {
    data: rows,
    links: {
      first: link(1),
      last: link(lastPage),
      prev: page > 1 ? link(page - 1) : null,
      next: page < lastPage ? link(page + 1) : null,
    },
    meta: {
      current_page: page,
      from,
      last_page: lastPage,
      path,
      per_page: perPage,
      to: from === null ? null : from + rows.length - 1,
      total,
    },
    status: 200,
  };
}
