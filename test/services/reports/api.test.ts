import { describe, expect } from 'vitest';
import type { Gateway } from '../../../src/runtime/gateway.js';
import { ALICE_KEY, BOB_KEY } from '../../helpers/embedded.js';
import { embeddedTest } from '../../helpers/fixtures.js';
import { send } from '../../helpers/gateway.js';
import { analyzerApi, badResults, goodResults } from '../../helpers/test-pages.js';

type Form = Record<string, string>;

const test = embeddedTest()
  .extend('api', ({ gateway }) => analyzerApi(gateway.url()))
  .extend('base', ({ pages }) => `http://127.0.0.1:${pages.port}`)
  .extend(
    'alice',
    ({ api }) =>
      (method: string, path: string, body?: Form) =>
        api(method, path, { key: ALICE_KEY, form: body }),
  )
  .extend(
    'bob',
    ({ api }) =>
      (method: string, path: string, body?: Form) =>
        api(method, path, { key: BOB_KEY, form: body }),
  )
  /** A stored report's record, as show/store/update give it. */
  .extend('record', ({ pages, base }) => (over: Record<string, unknown>) => ({
    id: expect.any(Number),
    url: `127.0.0.1:${pages.port}/good`,
    project: '127.0.0.1',
    result: 'good',
    score: 92,
    results: goodResults(base, '/good', 'gzip', expect.any(Number)),
    privacy: 1,
    password: false,
    generated_at: expect.any(String),
    created_at: expect.any(String),
    updated_at: expect.any(String),
    ...over,
  }))
  .extend('createReport', ({ api }) => async (form: Form, key = ALICE_KEY) => {
    const reply = await api('POST', '/api/v1/reports', { key, form });
    expect(reply.status, reply.text).toBe(201);
    return (reply.json() as { data: { id: number } & Record<string, unknown> }).data;
  });

const NOT_FOUND = { message: 'Resource not found.', status: 404 };
const invalid = (fields: Record<string, string[]>) => ({ message: fields, status: 422 });

describe('reports API: authentication', () => {
  test.for<[string, string]>([
    ['GET', '/api/v1/reports'],
    ['GET', '/api/v1/reports/1'],
    ['POST', '/api/v1/reports'],
    ['PUT', '/api/v1/reports/1'],
    ['PATCH', '/api/v1/reports/1'],
    ['DELETE', '/api/v1/reports/1'],
    ['GET', '/api/v1/projects'],
  ])('%s %s without a key, or with a wrong one: 401', async ([method, path], { api }) => {
    for (const key of [null, 'tg_wrong_key']) {
      const reply = await api(method, path, { key });
      expect(reply.status).toBe(401);
      expect(reply.json()).toEqual({ message: 'Unauthenticated.' });
    }
  });

  test('the OpenAPI document is public and lists the reports operations', async ({ api }) => {
    const reply = await api('GET', '/api/v1/openapi.json');
    expect(reply.status).toBe(200);
    const doc = reply.json() as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths['/api/v1/reports']!).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/api/v1/reports/{id}']!).sort()).toEqual(['delete', 'get', 'patch', 'put']);
    expect(Object.keys(doc.paths['/api/v1/projects']!)).toEqual(['get']);
    expect(Object.keys(doc.paths['/api/v1/projects/{project}']!)).toEqual(['delete']);
  });

  test('an unknown path under /api/v1: the 404 shape', async ({ alice }) => {
    const reply = await alice('GET', '/api/v1/nothing-here');
    expect(reply.status).toBe(404);
    expect(reply.json()).toEqual(NOT_FOUND);
  });
});

describe('reports API: store, show, update, delete', () => {
  test('store analyses the page: 201 with the record and its results', async ({ alice, pages, record }) => {
    const reply = await alice('POST', '/api/v1/reports', { url: pages.url('/good') });
    expect(reply.status).toBe(201);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = reply.json() as { data: Record<string, string> };
    expect(body).toEqual({ data: record({}), status: 200 });
    expect(body.data.updated_at).toBe(body.data.created_at);
  });

  test('store from a JSON body, with privacy 2 and a password', async ({ api, pages, record }) => {
    const reply = await api('POST', '/api/v1/reports', {
      key: ALICE_KEY,
      json: { url: pages.url('/good'), privacy: 2, password: 'hunter2' },
    });
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual({ data: record({ privacy: 2, password: true }), status: 200 });
  });

  test('show gives the same record; another user’s report and unknown ids are 404', async ({
    createReport,
    pages,
    alice,
  }) => {
    const created = await createReport({ url: pages.url('/good'), privacy: '0' });
    const shown = await alice('GET', `/api/v1/reports/${created.id}`);
    expect(shown.status).toBe(200);
    expect(shown.json()).toEqual({ data: created, status: 200 });
    for (const path of [
      `/api/v1/reports/${created.id + 1000}`,
      '/api/v1/reports/abc',
      '/api/v1/reports/-1',
    ]) {
      const reply = await alice('GET', path);
      expect(reply.status, path).toBe(404);
      expect(reply.json()).toEqual(NOT_FOUND);
    }
  });

  test('update privacy and password (PUT and PATCH); results=0 keeps the analysis', async ({
    createReport,
    pages,
    alice,
  }) => {
    const created = await createReport({ url: pages.url('/good') });
    const put = await alice('PUT', `/api/v1/reports/${created.id}`, { privacy: '2', password: 'secret' });
    expect(put.status).toBe(200);
    expect(put.json()).toEqual({
      data: { ...created, privacy: 2, password: true, updated_at: expect.any(String) },
      status: 200,
    });
    // The password stays set when only privacy changes.
    const patch = await alice('PATCH', `/api/v1/reports/${created.id}`, { privacy: '0', results: '0' });
    expect(patch.status).toBe(200);
    expect(patch.json()).toEqual({
      data: { ...created, privacy: 0, password: true, updated_at: expect.any(String) },
      status: 200,
    });
    // Privacy 2 again: the stored password is enough.
    const again = await alice('PATCH', `/api/v1/reports/${created.id}`, { privacy: '2' });
    expect(again.status).toBe(200);
  });

  test('update with results=1 fetches and analyses again and moves generated_at', async ({
    createReport,
    pages,
    record,
    base,
    alice,
  }) => {
    const created = await createReport({ url: pages.url('/flip') });
    expect(created).toEqual(
      record({
        url: `127.0.0.1:${pages.port}/flip`,
        result: 'bad',
        score: 26,
        results: {
          ...badResults(base, expect.any(Number)),
          https_encryption: {
            passed: false,
            importance: 'high',
            value: `${base}/flip`,
            errors: { missing: null },
          },
        },
      }),
    );
    const reply = await alice('PATCH', `/api/v1/reports/${created.id}`, { results: '1' });
    expect(reply.status).toBe(200);
    const updated = (reply.json() as { data: Record<string, unknown> }).data;
    expect(updated).toEqual({
      ...created,
      result: 'good',
      score: 87,
      results: {
        ...goodResults(base, '/flip', null, expect.any(Number)),
        text_compression: { passed: false, importance: 'medium', value: null, errors: { missing: null } },
      },
      generated_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(Date.parse(updated.generated_at as string)).toBeGreaterThan(
      Date.parse(created.generated_at as string),
    );
    expect(updated.created_at).toBe(created.created_at);
  });

  test('update of an unknown or another user’s report is 404, checked before the body', async ({
    createReport,
    pages,
    bob,
    alice,
  }) => {
    const created = await createReport({ url: pages.url('/good') });
    for (const [who, path] of [
      [bob, `/api/v1/reports/${created.id}`],
      [alice, '/api/v1/reports/999999'],
    ] as const) {
      for (const method of ['PUT', 'PATCH']) {
        const reply = await who(method, path, { privacy: '9' });
        expect(reply.status).toBe(404);
        expect(reply.json()).toEqual(NOT_FOUND);
      }
    }
    expect((await alice('GET', `/api/v1/reports/${created.id}`)).json()).toEqual({
      data: created,
      status: 200,
    });
  });

  test('delete: the delete shape, then 404; another user cannot delete', async ({
    createReport,
    pages,
    bob,
    alice,
  }) => {
    const created = await createReport({ url: pages.url('/good') });
    const denied = await bob('DELETE', `/api/v1/reports/${created.id}`);
    expect(denied.status).toBe(404);
    expect(denied.json()).toEqual(NOT_FOUND);
    const reply = await alice('DELETE', `/api/v1/reports/${created.id}`);
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ id: created.id, object: 'report', deleted: true, status: 200 });
    for (const method of ['GET', 'DELETE']) {
      const gone = await alice(method, `/api/v1/reports/${created.id}`);
      expect(gone.status).toBe(404);
      expect(gone.json()).toEqual(NOT_FOUND);
    }
  });
});

describe('reports API: validation', () => {
  test.for<[string, unknown, Record<string, string[]>]>([
    ['no url', {}, { url: ['The url field is required.'] }],
    ['empty url', { url: '' }, { url: ['The url field is required.'] }],
    ['not a url', { url: 'not a url' }, { url: ['The url field must be a valid URL.'] }],
    ['no scheme', { url: 'example.com' }, { url: ['The url field must be a valid URL.'] }],
    ['ftp scheme', { url: 'ftp://example.com/' }, { url: ['The url field must be a valid URL.'] }],
    [
      'credentials in the url',
      { url: 'http://user:pass@example.com/' },
      { url: ['The url field must be a valid URL.'] },
    ],
    [
      'a user name in the url',
      { url: 'https://user@example.com/' },
      { url: ['The url field must be a valid URL.'] },
    ],
    [
      'url too long',
      { url: `https://example.com/${'a'.repeat(2040)}` },
      { url: ['The url field must not be greater than 2048 characters.'] },
    ],
    [
      'privacy 3',
      { url: 'https://example.com/', privacy: '3' },
      { privacy: ['The selected privacy is invalid.'] },
    ],
    [
      'privacy x',
      { url: 'https://example.com/', privacy: 'x' },
      { privacy: ['The selected privacy is invalid.'] },
    ],
    [
      'privacy 2 without password',
      { url: 'https://example.com/', privacy: '2' },
      { password: ['The password field is required when privacy is 2.'] },
    ],
    [
      'password too long',
      { url: 'https://example.com/', password: 'p'.repeat(129) },
      { password: ['The password field must not be greater than 128 characters.'] },
    ],
    [
      'several fields',
      { privacy: '7', password: 'p'.repeat(129) },
      {
        url: ['The url field is required.'],
        privacy: ['The selected privacy is invalid.'],
        password: ['The password field must not be greater than 128 characters.'],
      },
    ],
  ])('store, %s: 422', async ([_label, form, fields], { alice }) => {
    const reply = await alice('POST', '/api/v1/reports', form as Record<string, string>);
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(invalid(fields));
  });

  test('credentials in the url are refused before any fetch, and never stored', async ({ pages, alice }) => {
    const url = pages.url('/good').replace('http://', 'http://user:secret@');
    const reply = await alice('POST', '/api/v1/reports', { url });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(invalid({ url: ['The url field must be a valid URL.'] }));
    const listed = await alice('GET', '/api/v1/reports?per_page=100');
    expect(listed.text).not.toContain('secret');
  });

  describe.each([
    ['a JSON array', 'application/json', '[]'],
    ['a JSON array of fields', 'application/json', '[{"url":"https://example.com/"}]'],
    ['a JSON string', 'application/json', '"x"'],
    ['a JSON number', 'application/json', '42'],
    ['empty plain text', 'text/plain', ''],
    ['plain text', 'text/plain', 'url=https://example.com/'],
  ])('a body that is %s', (_label, type, body) => {
    const raw = (gateway: Gateway, method: string, path: string) =>
      send(`${gateway.url()}${path}`, {
        method,
        headers: {
          host: 'analyzer.localhost',
          accept: 'application/json',
          authorization: `Bearer ${ALICE_KEY}`,
          'content-type': type,
        },
        body,
      });
    const BAD_BODY = { message: 'The request body must be an object of fields.', status: 400 };

    test('store: 400', async ({ gateway }) => {
      const reply = await raw(gateway, 'POST', '/api/v1/reports');
      expect(reply.status).toBe(400);
      expect(reply.json()).toEqual(BAD_BODY);
    });

    test('update (PUT and PATCH): 400; an unknown report is still 404', async ({
      createReport,
      pages,
      alice,
      gateway,
    }) => {
      const created = await createReport({ url: pages.url('/good') });
      for (const method of ['PUT', 'PATCH']) {
        const reply = await raw(gateway, method, `/api/v1/reports/${created.id}`);
        expect(reply.status, method).toBe(400);
        expect(reply.json()).toEqual(BAD_BODY);
        const unknown = await raw(gateway, method, '/api/v1/reports/999999');
        expect(unknown.status, method).toBe(404);
      }
      expect((await alice('GET', `/api/v1/reports/${created.id}`)).json()).toEqual({
        data: created,
        status: 200,
      });
    });
  });

  test('a JSON null body counts as no fields', async ({ api }) => {
    const reply = await api('POST', '/api/v1/reports', { key: ALICE_KEY, json: null });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(invalid({ url: ['The url field is required.'] }));
  });

  test('store with a JSON url of the wrong type', async ({ api }) => {
    const reply = await api('POST', '/api/v1/reports', { key: ALICE_KEY, json: { url: 42, privacy: 1.5 } });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(
      invalid({ url: ['The url field is required.'], privacy: ['The selected privacy is invalid.'] }),
    );
  });

  test('update: each field, and privacy 2 without any password', async ({ createReport, pages, alice }) => {
    const created = await createReport({ url: pages.url('/good') });
    const path = `/api/v1/reports/${created.id}`;
    const cases: [Record<string, string>, Record<string, string[]>][] = [
      [{ privacy: '5' }, { privacy: ['The selected privacy is invalid.'] }],
      [{ results: '2' }, { results: ['The selected results is invalid.'] }],
      [{ results: 'yes' }, { results: ['The selected results is invalid.'] }],
      [
        { password: 'p'.repeat(129) },
        { password: ['The password field must not be greater than 128 characters.'] },
      ],
      [{ privacy: '2' }, { password: ['The password field is required when privacy is 2.'] }],
      [
        { privacy: '-1', results: '3' },
        { privacy: ['The selected privacy is invalid.'], results: ['The selected results is invalid.'] },
      ],
    ];
    for (const [form, fields] of cases) {
      const reply = await alice('PATCH', path, form);
      expect(reply.status, JSON.stringify(form)).toBe(422);
      expect(reply.json()).toEqual(invalid(fields));
    }
    expect((await alice('GET', path)).json()).toEqual({ data: created, status: 200 });
  });

  // As the original's controller: a value it does not know is the default (no 422).
  test('list: each parameter outside its allowed values reads as its default', async ({ alice }) => {
    type Page = { meta: { path: string; last_page: number }; links: Record<string, string | null> };
    const defaults = (await alice('GET', '/api/v1/reports')).json() as Page;
    const { path, last_page: last } = defaults.meta;
    const cases: [string, string][] = [
      ['per_page=5', 'per_page=10&sort=desc'],
      ['per_page=20', 'per_page=10&sort=desc'],
      ['per_page=abc', 'per_page=10&sort=desc'],
      ['search_by=project', 'search_by=project&sort=desc&per_page=10'],
      ['sort_by=created_at', 'sort_by=created_at&sort=desc&per_page=10'],
      ['sort_by=score', 'sort_by=score&sort=desc&per_page=10'],
      ['sort=foo', 'sort=desc&per_page=10'],
      ['result=foo', 'result=foo&sort=desc&per_page=10'],
      ['sort=asc&sort=desc', 'sort=desc&per_page=10'],
      [
        'per_page=5&search_by=x&sort_by=y&sort=z&result=w',
        'per_page=10&search_by=x&sort_by=y&sort=desc&result=w',
      ],
    ];
    for (const [query, linked] of cases) {
      const reply = await alice('GET', `/api/v1/reports?${query}`);
      expect(reply.status, query).toBe(200);
      expect(reply.json(), query).toEqual({
        ...defaults,
        links: {
          first: `${path}?${linked}&page=1`,
          last: `${path}?${linked}&page=${last}`,
          prev: null,
          next: last > 1 ? `${path}?${linked}&page=2` : null,
        },
      });
    }
  });
});

describe('reports API: owner isolation and projects', () => {
  test('each user lists only their reports and projects', async ({ createReport, pages, bob, alice }) => {
    const theirs = await createReport({ url: `http://localhost:${pages.port}/good` }, BOB_KEY);
    expect(theirs.project).toBe('localhost');
    expect(theirs.url).toBe(`localhost:${pages.port}/good`);

    const bobs = await bob('GET', '/api/v1/reports');
    expect((bobs.json() as { data: { id: number }[] }).data.map((r) => r.id)).toEqual([theirs.id]);
    const bobsProjects = (await bob('GET', '/api/v1/projects')).json() as { data: unknown };
    expect(bobsProjects.data).toEqual([{ project: 'localhost', reports: 1 }]);

    const alices = (await alice('GET', '/api/v1/reports?per_page=100')).json() as { data: { id: number }[] };
    expect(alices.data.map((r) => r.id)).not.toContain(theirs.id);
    const projects = await alice('GET', '/api/v1/projects');
    expect(projects.status).toBe(200);
    expect((projects.json() as { data: unknown }).data).toEqual([
      { project: '127.0.0.1', reports: alices.data.length },
    ]);

    const denied = await alice('GET', `/api/v1/reports/${theirs.id}`);
    expect(denied.status).toBe(404);
    expect(denied.json()).toEqual(NOT_FOUND);
  });
});
