import { describe, expect } from 'vitest';
import { ALICE_KEY } from '../../helpers/embedded.js';
import { embeddedTest } from '../../helpers/fixtures.js';
import { analyzerApi } from '../../helpers/test-pages.js';

interface Listed {
  id: number;
  url: string;
  project: string;
  result: string;
  score: number;
  privacy: number;
  password: boolean;
  generated_at: string;
  created_at: string;
  updated_at: string;
}

/** The shipped config's services.reports.publicUrl (REPORTS_PUBLIC_URL unset), not the Host sent. */
const PATH = 'http://analyzer.localhost:8080/api/v1/reports';
const KINDS = ['/good', '/decent', '/bad'] as const;

const test = embeddedTest()
  /** The 21 reports, in creation (id) order: good, decent, bad in turn; the last three on another host (project). */
  .extend('created', { scope: 'file' }, async ({ gateway, pages }) => {
    const api = analyzerApi(gateway.url());
    const created: Listed[] = [];
    for (let i = 1; i <= 21; i++) {
      const host = i > 18 ? 'localhost' : '127.0.0.1';
      const url = `http://${host}:${pages.port}${KINDS[(i - 1) % 3]}?n=${String(i).padStart(2, '0')}`;
      const reply = await api('POST', '/api/v1/reports', { key: ALICE_KEY, form: { url, privacy: '0' } });
      expect(reply.status, reply.text).toBe(201);
      const { results: _results, ...record } = (reply.json() as { data: Listed & { results: unknown } }).data;
      created.push(record);
    }
    return created;
  })
  /** The API, once the reports above exist: every test of the file reads them. */
  .extend('api', { scope: 'file' }, ({ gateway, created: _created }) => analyzerApi(gateway.url()))
  .extend('list', { scope: 'file' }, ({ api }) => async (query: string) => {
    const reply = await api('GET', `/api/v1/reports${query}`, { key: ALICE_KEY });
    expect(reply.status, reply.text).toBe(200);
    return reply.json() as {
      data: Listed[];
      links: Record<string, string | null>;
      meta: Record<string, unknown>;
    };
  })
  .extend(
    'byId',
    { scope: 'file' },
    ({ created }) =>
      (wanted: number[]) =>
        wanted.map((n) => created[n - 1]!.id),
  );

const ids = (rows: Listed[]) => rows.map((r) => r.id);

describe('reports list: pagination', () => {
  test('three pages of ten by default, newest first, with links and meta', async ({ list, created }) => {
    const first = await list('');
    expect(first).toEqual({
      data: created.slice(11).reverse(),
      links: {
        first: `${PATH}?sort=desc&per_page=10&page=1`,
        last: `${PATH}?sort=desc&per_page=10&page=3`,
        prev: null,
        next: `${PATH}?sort=desc&per_page=10&page=2`,
      },
      meta: { current_page: 1, from: 1, last_page: 3, path: PATH, per_page: 10, to: 10, total: 21 },
      status: 200,
    });
    const second = await list('?page=2');
    expect(second.data).toEqual(created.slice(1, 11).reverse());
    expect(second.links).toEqual({
      first: `${PATH}?sort=desc&per_page=10&page=1`,
      last: `${PATH}?sort=desc&per_page=10&page=3`,
      prev: `${PATH}?sort=desc&per_page=10&page=1`,
      next: `${PATH}?sort=desc&per_page=10&page=3`,
    });
    expect(second.meta).toEqual({
      current_page: 2,
      from: 11,
      last_page: 3,
      path: PATH,
      per_page: 10,
      to: 20,
      total: 21,
    });
    const third = await list('?page=3');
    expect(third.data).toEqual([created[0]]);
    expect(third.links).toEqual({
      first: `${PATH}?sort=desc&per_page=10&page=1`,
      last: `${PATH}?sort=desc&per_page=10&page=3`,
      prev: `${PATH}?sort=desc&per_page=10&page=2`,
      next: null,
    });
    expect(third.meta).toEqual({
      current_page: 3,
      from: 21,
      last_page: 3,
      path: PATH,
      per_page: 10,
      to: 21,
      total: 21,
    });
  });

  test('the links keep the query parameters; a page past the end is empty', async ({ list }) => {
    const query = 'sort=asc&per_page=10&result=good&search=n%3D&search_by=url';
    const past = await list(`?${query}&page=4`);
    expect(past).toEqual({
      data: [],
      links: {
        first: `${PATH}?${query}&page=1`,
        last: `${PATH}?${query}&page=1`,
        prev: `${PATH}?${query}&page=3`,
        next: null,
      },
      meta: { current_page: 4, from: null, last_page: 1, path: PATH, per_page: 10, to: null, total: 7 },
      status: 200,
    });
  });

  test.for([25, 50, 100])('per_page=%i', async (perPage, { list, created }) => {
    const page = await list(`?per_page=${perPage}&sort=asc`);
    expect(ids(page.data)).toEqual(ids(created));
    expect(page.meta).toEqual({
      current_page: 1,
      from: 1,
      last_page: 1,
      path: PATH,
      per_page: perPage,
      to: 21,
      total: 21,
    });
    expect(page.links.next).toBeNull();
  });

  test('an invalid page number reads as page 1', async ({ list }) => {
    expect((await list('?page=0')).meta.current_page).toBe(1);
    expect((await list('?page=x')).meta.current_page).toBe(1);
  });
});

describe('reports list: filters and sorting', () => {
  test('search is a case-insensitive substring of the url; search_by=url is the default', async ({
    created,
    list,
    byId,
  }) => {
    const expected = ids(created.filter((r) => r.url.includes('?n=0'))).reverse();
    expect(ids((await list('?search=N%3D0&per_page=25')).data)).toEqual(expected);
    expect(ids((await list('?search=n%3D0&search_by=url&per_page=25')).data)).toEqual(expected);
    expect(ids((await list('?search=DECENT%3Fn%3D1&per_page=25')).data)).toEqual(byId([17, 14, 11]));
    expect((await list('?search=nothing-like-this')).meta.total).toBe(0);
  });

  test('project and result filters, alone and together', async ({ list, byId }) => {
    expect(ids((await list('?project=localhost')).data)).toEqual(byId([21, 20, 19]));
    expect((await list('?project=127.0.0.1&per_page=25')).meta.total).toBe(18);
    expect(ids((await list('?result=bad&per_page=25')).data)).toEqual(byId([21, 18, 15, 12, 9, 6, 3]));
    expect(ids((await list('?result=decent&project=localhost')).data)).toEqual(byId([20]));
    expect((await list('?result=good&project=nowhere')).data).toEqual([]);
  });

  test('sort_by url, result, generated_at and id, both ways; ties by id', async ({ created, list }) => {
    const byUrl = [...created].sort((a, b) => (a.url < b.url ? -1 : 1));
    expect(ids((await list('?sort_by=url&sort=asc&per_page=25')).data)).toEqual(ids(byUrl));
    expect(ids((await list('?sort_by=url&per_page=25')).data)).toEqual(ids(byUrl).reverse());

    const rank = { bad: 0, decent: 1, good: 2 } as Record<string, number>;
    const byResult = [...created].sort((a, b) => rank[a.result]! - rank[b.result]! || a.id - b.id);
    expect(ids((await list('?sort_by=result&sort=asc&per_page=25')).data)).toEqual(ids(byResult));
    expect(ids((await list('?sort_by=result&sort=desc&per_page=25')).data)).toEqual(ids(byResult).reverse());

    expect(ids((await list('?sort_by=generated_at&sort=asc&per_page=25')).data)).toEqual(ids(created));
    expect(ids((await list('?sort_by=id&sort=desc&per_page=25')).data)).toEqual(ids(created).reverse());
  });

  test('records in a list carry the score but not the results', async ({ list, created, pages }) => {
    const [newest] = (await list('?per_page=10')).data;
    expect(newest).toEqual({
      id: created[20]!.id,
      url: `localhost:${pages.port}/bad?n=21`,
      project: 'localhost',
      result: 'bad',
      score: 26,
      privacy: 0,
      password: false,
      generated_at: expect.any(String),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  const PROJECTS = 'http://analyzer.localhost:8080/api/v1/projects';
  const projects = async (api: ReturnType<typeof analyzerApi>, query: string) => {
    const reply = await api('GET', `/api/v1/projects${query}`, { key: ALICE_KEY });
    expect(reply.status).toBe(200);
    return reply.json() as unknown;
  };
  const envelope = (data: unknown[], query: string, perPage = 10) => ({
    data,
    links: {
      first: `${PROJECTS}?${query}&page=1`,
      last: `${PROJECTS}?${query}&page=1`,
      prev: null,
      next: null,
    },
    meta: {
      current_page: 1,
      from: data.length > 0 ? 1 : null,
      last_page: 1,
      path: PROJECTS,
      per_page: perPage,
      to: data.length > 0 ? data.length : null,
      total: data.length,
    },
    status: 200,
  });
  const BOTH = [
    { project: '127.0.0.1', reports: 18 },
    { project: 'localhost', reports: 3 },
  ];

  test('projects: a paginated list of names with their report counts, A-Z by default', async ({ api }) => {
    expect(await projects(api, '')).toEqual(envelope(BOTH, 'sort=asc&per_page=10'));
  });

  test('projects: sort=desc is Z-A; search is a case-insensitive substring of the name', async ({ api }) => {
    expect(await projects(api, '?sort=desc&per_page=25')).toEqual(
      envelope([...BOTH].reverse(), 'sort=desc&per_page=25', 25),
    );
    expect(await projects(api, '?search=LOCAL')).toEqual(
      envelope([BOTH[1]], 'search=LOCAL&sort=asc&per_page=10'),
    );
    expect(await projects(api, '?search=nothing')).toEqual(
      envelope([], 'search=nothing&sort=asc&per_page=10'),
    );
  });

  test('projects: per_page=5 and sort=foo read as the defaults', async ({ api }) => {
    expect(await projects(api, '?per_page=5&sort=foo')).toEqual(envelope(BOTH, 'per_page=10&sort=asc'));
  });
});
