import fc from 'fast-check';
import { expect } from 'vitest';
import { userForKey } from '../../../src/services/accounts/accounts.js';
import type { Results } from '../../../src/services/reports/checks/types.js';
import type { ReportResult } from '../../../src/services/reports/score.js';
import { insertReport, listReports, type ReportRow } from '../../../src/services/reports/store.js';
import { ALICE_KEY } from '../../helpers/embedded.js';
import { embeddedTest } from '../../helpers/fixtures.js';
import { pageOf } from '../../helpers/list-pages.js';
import { analyzerApi } from '../../helpers/test-pages.js';

/**
 * The list's filters, sorting and paging agree with a reference model over random data sets.
 * Rows go straight into the gateway's database through the service's own data access (analysing
 * pages over HTTP would be too slow for random data); queries go through the gateway.
 */

const test = embeddedTest()
  .extend('api', { scope: 'file' }, ({ gateway }) => analyzerApi(gateway.url()))
  .extend('alice', { scope: 'file' }, async ({ api, db }) => {
    // The first request starts the service, which creates the users.
    expect((await api('GET', '/api/v1/reports', { key: ALICE_KEY })).status).toBe(200);
    return userForKey(db, ALICE_KEY)!;
  });

const RESULTS: ReportResult[] = ['good', 'decent', 'bad'];
const SORT_KEYS = ['id', 'generated_at', 'url', 'result'] as const;
type SortKey = (typeof SORT_KEYS)[number];

const rowArb = fc.record({
  scheme: fc.constantFrom('http', 'https'),
  host: fc.constantFrom('example.com', 'www.example.com', 'Shop.test', 'blog.example.org', 'a_b.test'),
  path: fc.constantFrom('/', '/a', '/A/b', '/about/', '/x?q=1', '/100%25', '/e_x'),
  result: fc.constantFrom(...RESULTS),
  score: fc.integer({ min: 0, max: 100 }),
  // Few distinct instants, so sorting by generated_at has ties.
  minute: fc.integer({ min: 0, max: 5 }),
  privacy: fc.constantFrom(0, 1, 2),
});

const queryArb = fc.record(
  {
    search: fc.string({ unit: fc.constantFrom('a', 'E', 'x', '.', '/', '%', '_', '?', 'o'), maxLength: 3 }),
    search_by: fc.constant('url'),
    project: fc.constantFrom('example.com', 'shop.test', 'blog.example.org', 'a_b.test', 'nowhere'),
    // Values the original does not know (foo, created_at, 5, 20) read as the defaults.
    result: fc.constantFrom<string>(...RESULTS, 'foo'),
    sort_by: fc.constantFrom<string>(...SORT_KEYS, 'created_at'),
    sort: fc.constantFrom('asc', 'desc', 'foo'),
    per_page: fc.constantFrom(10, 25, 50, 100, 5, 20),
    page: fc.integer({ min: 1, max: 4 }),
  },
  { requiredKeys: [] },
);
type Query = typeof queryArb extends fc.Arbitrary<infer Q> ? Q : never;

/** The shipped config's services.reports.publicUrl (REPORTS_PUBLIC_URL unset), not the Host sent. */
const PATH = 'http://analyzer.localhost:8080/api/v1/reports';

/**
 * The reference: filter, order (ties by id, in the same direction), then deal the rows out into
 * pages of per_page (pageOf). `sent` is the query string as sent: the links keep its other
 * parameters, in their order, and put page last.
 */
function model(rows: ReportRow[], q: Query, sent: string) {
  const filtered = rows.filter(
    (r) =>
      (!q.search || r.url.toLowerCase().includes(q.search.toLowerCase())) &&
      (q.project === undefined || r.project === q.project) &&
      (!RESULTS.includes(q.result as ReportResult) || r.result === q.result),
  );
  const key: SortKey = SORT_KEYS.find((k) => k === q.sort_by) ?? 'id';
  const sort = q.sort === 'asc' ? 'asc' : 'desc';
  const perPage = [10, 25, 50, 100].includes(q.per_page ?? 0) ? q.per_page! : 10;
  const sign = sort === 'asc' ? 1 : -1;
  const sorted = [...filtered].sort((a, b) => {
    const x = a[key];
    const y = b[key];
    return sign * ((x < y ? -1 : x > y ? 1 : 0) || a.id - b.id);
  });
  const page = q.page ?? 1;
  const shown = pageOf(sorted, perPage, page);
  // The links carry the sort and per_page in force: in place of the ones sent, else appended.
  const others = sent.split('&').filter((p) => p !== '' && !p.startsWith('page='));
  for (const [name, value] of [
    ['sort', sort],
    ['per_page', String(perPage)],
  ]) {
    const at = others.findIndex((p) => p.startsWith(`${name}=`));
    if (at === -1) others.push(`${name}=${value}`);
    else others[at] = `${name}=${value}`;
  }
  const link = (n: number) => `${PATH}?${[...others, `page=${n}`].join('&')}`;
  return {
    ids: shown.rows.map((r) => r.id),
    links: {
      first: link(1),
      last: link(shown.meta.last_page),
      prev: page > 1 ? link(page - 1) : null,
      next: shown.hasNext ? link(page + 1) : null,
    },
    meta: { ...shown.meta, path: PATH },
  };
}

test('list filters, sorting and paging agree with the model', async ({ api, db, alice }) => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(rowArb, { maxLength: 40 }),
      fc.array(queryArb, { minLength: 1, maxLength: 6 }),
      async (specs, queries) => {
        db.prepare('DELETE FROM reports WHERE user_id = ?').run(alice);
        const rows = specs.map((s) =>
          insertReport(db, alice, {
            pageUrl: new URL(`${s.scheme}://${s.host}${s.path}`).href,
            analysis: {
              result: s.result,
              score: s.score,
              results: {} as Results,
              generatedAt: new Date(Date.UTC(2025, 0, 1, 12, s.minute)).toISOString(),
            },
            privacy: s.privacy,
            passwordHash: null,
          }),
        );
        for (const q of queries) {
          const params = new URLSearchParams(
            Object.entries(q).map(([k, v]): [string, string] => [k, String(v)]),
          );
          const reply = await api('GET', `/api/v1/reports?${params.toString()}`, { key: ALICE_KEY });
          expect(reply.status, reply.text).toBe(200);
          const body = reply.json() as { data: { id: number }[]; links: unknown; meta: unknown };
          const expected = model(rows, q, params.toString());
          expect(
            body.data.map((r) => r.id),
            params.toString(),
          ).toEqual(expected.ids);
          expect(body.meta, params.toString()).toEqual(expected.meta);
          expect(body.links, params.toString()).toEqual(expected.links);
        }
      },
    ),
    { numRuns: 15 },
  );
});

test('a page far past the end is an empty page, not a 500', async ({ api, db, alice }) => {
  db.prepare('DELETE FROM reports WHERE user_id = ?').run(alice);
  insertReport(db, alice, {
    pageUrl: 'https://example.com/',
    analysis: { result: 'good', score: 90, results: {} as Results },
    privacy: 1,
    passwordHash: null,
  });
  // The store itself never reads at an offset past the rows, however large (SQLite takes 64 bits).
  for (const offset of [1, 2 ** 63, 1e19 * 100, Number.MAX_VALUE]) {
    const listed = listReports(db, alice, { sortBy: 'id', sort: 'desc', limit: 100, offset });
    expect(listed, String(offset)).toEqual({ rows: [], total: 1 });
  }
  for (const page of ['2', '1000000000000000000', '9'.repeat(400)]) {
    const reply = await api('GET', `/api/v1/reports?page=${page}&per_page=100`, { key: ALICE_KEY });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json()).toEqual({
      data: [],
      links: {
        first: `${PATH}?per_page=100&sort=desc&page=1`,
        last: `${PATH}?per_page=100&sort=desc&page=1`,
        prev: expect.stringMatching(
          /^http:\/\/analyzer\.localhost:8080\/api\/v1\/reports\?per_page=100&sort=desc&page=\d/,
        ),
        next: null,
      },
      meta: {
        current_page: expect.any(Number),
        from: null,
        last_page: 1,
        path: PATH,
        per_page: 100,
        to: null,
        total: 1,
      },
      status: 200,
    });
  }
});
