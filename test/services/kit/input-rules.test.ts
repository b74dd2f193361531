import { FormData, request } from 'undici';
import { describe, expect } from 'vitest';
import { DEFAULT_CONFIG } from '../../helpers/default-config.js';
import { ALICE_KEY, BOB_KEY, embeddedEnv, newDataDir } from '../../helpers/embedded.js';
import { embeddedTest } from '../../helpers/fixtures.js';
import { send, startGateway, type Reply } from '../../helpers/gateway.js';

/**
 * The original clients' input rules (issue #12), through the real gateway and its embedded
 * websites and reports services, over HTTP, on a fresh SQLite file: what PHP cURL, the phpRank
 * client and the Pipedream integration send, answered as Laravel answered it.
 */

const FORM = 'application/x-www-form-urlencoded';
const LARAVEL_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const UNAUTHENTICATED = { message: 'Unauthenticated.' };
const NOT_FOUND = { message: 'Resource not found.', status: 404 };

interface Call {
  key?: string | null;
  /** Host header: the reports API answers on analyzer.localhost. */
  host?: string;
  type?: string;
  body?: string;
}

const form = (fields: Record<string, string>) => ({
  type: FORM,
  body: new URLSearchParams(fields).toString(),
});

/** A website record with the store defaults. */
const website = (url: string, over: Record<string, unknown> = {}) => ({
  id: expect.any(Number),
  url,
  privacy: 1,
  password: false,
  email: 0,
  exclude_bots: 1,
  exclude_params: null,
  exclude_ips: null,
  created_at: expect.stringMatching(LARAVEL_TIME),
  updated_at: expect.stringMatching(LARAVEL_TIME),
  ...over,
});

const test = embeddedTest()
  .extend(
    'call',
    ({ gateway }) =>
      function call(method: string, path: string, options: Call = {}): Promise<Reply> {
        const key = options.key === undefined ? ALICE_KEY : options.key;
        const headers: Record<string, string> = { accept: 'application/json' };
        if (options.host) headers.host = options.host;
        if (key !== null) headers.authorization = `Bearer ${key}`;
        if (options.type) headers['content-type'] = options.type;
        return send(`${gateway.url()}${path}`, { method, headers, body: options.body });
      },
  )
  .extend(
    'createSite',
    ({ call }) =>
      async function createSite(url: string, key = ALICE_KEY): Promise<number> {
        const reply = await call('POST', '/api/v1/websites', { key, ...form({ url }) });
        expect(reply.status, reply.text).toBe(201);
        return (reply.json() as { data: { id: number } }).data.id;
      },
  )
  /** A multipart/form-data request, as PHP cURL sends an array of fields (undici writes the body). */
  .extend(
    'multipart',
    ({ gateway }) =>
      async function multipart(
        method: string,
        path: string,
        body: FormData,
        key = ALICE_KEY,
      ): Promise<Reply> {
        const res = await request(`${gateway.url()}${path}`, {
          method: method as 'POST',
          headers: { accept: 'application/json', authorization: `Bearer ${key}` },
          body,
        });
        const text = await res.body.text();
        return { status: res.statusCode, headers: {}, text, json: () => JSON.parse(text) as unknown };
      },
  );

describe('blank form values mean "not given"', () => {
  test('store: privacy=&email=&exclude_bots=&password= are the defaults', async ({ call }) => {
    const reply = await call(
      'POST',
      '/api/v1/websites',
      form({ url: 'blank.example', privacy: '', email: '', exclude_bots: '', password: '' }),
    );
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual({ data: website('blank.example'), status: 200 });
  });

  test('update: blank values keep what is stored', async ({ createSite, call }) => {
    const id = await createSite('blank-update.example');
    expect((await call('PATCH', `/api/v1/websites/${id}`, form({ email: '1' }))).status).toBe(200);
    const reply = await call(
      'PUT',
      `/api/v1/websites/${id}`,
      form({ privacy: '', email: '', exclude_bots: '' }),
    );
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ data: website('blank-update.example', { id, email: 1 }), status: 200 });
  });
});

describe('multipart/form-data bodies', () => {
  test('store: the fields are read like a form', async ({ multipart }) => {
    const body = new FormData();
    body.append('url', 'https://www.multipart.example/');
    body.append('privacy', '0');
    body.append('exclude_params', 'utm_source\nutm_medium');
    const reply = await multipart('POST', '/api/v1/websites', body);
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json()).toEqual({
      data: website('multipart.example', { privacy: 0, exclude_params: 'utm_source\nutm_medium' }),
      status: 200,
    });
  });

  test('update: a multipart PUT changes the fields sent', async ({ createSite, multipart }) => {
    const id = await createSite('multipart-put.example');
    const body = new FormData();
    body.append('email', '1');
    const reply = await multipart('PUT', `/api/v1/websites/${id}`, body);
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ data: website('multipart-put.example', { id, email: 1 }), status: 200 });
  });

  test('a file part is refused with a clear 413, and nothing is stored', async ({ multipart, call }) => {
    const body = new FormData();
    body.append('url', 'file-upload.example');
    body.append('logo', new Blob(['GIF89a'], { type: 'image/gif' }), 'logo.gif');
    const reply = await multipart('POST', '/api/v1/websites', body);
    expect(reply.status).toBe(413);
    expect(reply.json()).toEqual({
      message: 'File uploads are not accepted: send the form fields alone.',
      status: 413,
    });
    const listed = await call('GET', '/api/v1/websites?search=file-upload');
    expect((listed.json() as { meta: { total: number } }).meta.total).toBe(0);
  });

  test('more than 100 fields: 413', async ({ multipart }) => {
    const body = new FormData();
    body.append('url', 'many-fields.example');
    for (let i = 0; i < 100; i++) body.append(`f${i}`, 'x');
    const reply = await multipart('POST', '/api/v1/websites', body);
    expect(reply.status).toBe(413);
    expect(reply.json()).toEqual({ message: 'The form has too many parts.', status: 413 });
  });
});

describe('query-string fields join the input on POST, PUT and PATCH', () => {
  test('store: url and privacy from the query, email from the body', async ({ call }) => {
    const reply = await call('POST', '/api/v1/websites?url=query.example&privacy=0', form({ email: '1' }));
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual({ data: website('query.example', { privacy: 0, email: 1 }), status: 200 });
  });

  test('the body wins a clash with the query', async ({ call }) => {
    const reply = await call(
      'POST',
      '/api/v1/websites?url=loser.example&email=1',
      form({ url: 'winner.example', email: '0' }),
    );
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual({ data: website('winner.example'), status: 200 });
  });

  test('PATCH with no body: the query alone', async ({ createSite, call }) => {
    const id = await createSite('query-patch.example');
    const reply = await call('PATCH', `/api/v1/websites/${id}?exclude_bots=0`);
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({
      data: website('query-patch.example', { id, exclude_bots: 0 }),
      status: 200,
    });
  });
});

describe('an empty body sent as application/json is no input', () => {
  test('POST: the 422 of a missing url, not a 400', async ({ call }) => {
    const reply = await call('POST', '/api/v1/websites', { type: 'application/json', body: '' });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual({ message: { url: ['The url field is required.'] }, status: 422 });
  });

  test('DELETE deletes', async ({ createSite, call }) => {
    const id = await createSite('json-delete.example');
    const reply = await call('DELETE', `/api/v1/websites/${id}`, { type: 'application/json' });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ id, object: 'website', deleted: true, status: 200 });
    expect((await call('GET', `/api/v1/websites/${id}`)).json()).toEqual(NOT_FOUND);
  });

  test('a malformed JSON body is still a 400', async ({ call }) => {
    const reply = await call('POST', '/api/v1/websites', { type: 'application/json', body: '{"url":' });
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ message: 'The JSON body is malformed.', status: 400 });
  });
});

describe('timestamps in Laravel form', () => {
  test('created_at and updated_at have microseconds: the stored milliseconds and 000', async ({
    createSite,
    call,
  }) => {
    const id = await createSite('time.example');
    const { data } = (await call('GET', `/api/v1/websites/${id}`)).json() as {
      data: { created_at: string; updated_at: string };
    };
    expect(data.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}000Z$/);
    expect(data.updated_at).toBe(data.created_at);
  });
});

describe('the API key as api_token', () => {
  test('?api_token= on a list: 200, and the key is not in the links', async ({ call }) => {
    const reply = await call('GET', `/api/v1/websites?search=zzz-none&api_token=${ALICE_KEY}`, { key: null });
    expect(reply.status).toBe(200);
    const path = (reply.json() as { meta: { path: string } }).meta.path;
    expect((reply.json() as { links: unknown }).links).toEqual({
      first: `${path}?search=zzz-none&sort=asc&per_page=10&page=1`,
      last: `${path}?search=zzz-none&sort=asc&per_page=10&page=1`,
      prev: null,
      next: null,
    });
  });

  test('a form field api_token: the store is the key owner’s', async ({ call }) => {
    const reply = await call('POST', '/api/v1/websites', {
      key: null,
      ...form({ url: 'token-form.example', api_token: BOB_KEY }),
    });
    expect(reply.status).toBe(201);
    const { id } = (reply.json() as { data: { id: number } }).data;
    expect((await call('GET', `/api/v1/websites/${id}`, { key: BOB_KEY })).status).toBe(200);
    expect((await call('GET', `/api/v1/websites/${id}`, { key: ALICE_KEY })).json()).toEqual(NOT_FOUND);
  });

  test('a JSON body field api_token', async ({ call }) => {
    const reply = await call('POST', '/api/v1/websites', {
      key: null,
      type: 'application/json',
      body: JSON.stringify({ url: 'token-json.example', api_token: ALICE_KEY }),
    });
    expect(reply.status).toBe(201);
  });

  test.for<[string, Call, string]>([
    ['a wrong Bearer', { key: 'tg_wrong' }, '/api/v1/websites'],
    ['a wrong ?api_token', { key: null }, '/api/v1/websites?api_token=tg_wrong'],
    ['an empty ?api_token and no header', { key: null }, '/api/v1/websites?api_token='],
    [
      'a wrong ?api_token beside a right Bearer (the query is read first)',
      {},
      '/api/v1/websites?api_token=tg_wrong',
    ],
  ])('%s: the same 401', async ([_label, options, path], { call }) => {
    const reply = await call('GET', path, options);
    expect(reply.status).toBe(401);
    expect(reply.json()).toEqual(UNAUTHENTICATED);
  });

  test('a wrong form field api_token: the same 401, nothing stored', async ({ call }) => {
    const reply = await call('POST', '/api/v1/websites', {
      key: null,
      ...form({ url: 'token-wrong.example', api_token: 'tg_wrong' }),
    });
    expect(reply.status).toBe(401);
    expect(reply.json()).toEqual(UNAUTHENTICATED);
    const listed = await call('GET', '/api/v1/websites?search=token-wrong');
    expect((listed.json() as { meta: { total: number } }).meta.total).toBe(0);
  });

  test('the reports API takes it too', async ({ call }) => {
    const reply = await call('GET', `/api/v1/projects?api_token=${ALICE_KEY}`, {
      key: null,
      host: 'analyzer.localhost',
    });
    expect(reply.status).toBe(200);
  });
});

describe('reports: the same rules', () => {
  const analyzer = 'analyzer.localhost';

  test('a multipart store with a blank privacy (the default, 1) and the url in the query', async ({
    gateway,
    pages,
  }) => {
    const body = new FormData();
    body.append('privacy', '');
    const res = await request(
      `${gateway.url()}/api/v1/reports?url=${encodeURIComponent(`http://127.0.0.1:${pages.port}/good`)}`,
      {
        method: 'POST',
        headers: { host: analyzer, accept: 'application/json', authorization: `Bearer ${ALICE_KEY}` },
        body,
      },
    );
    const text = await res.body.text();
    expect(res.statusCode, text).toBe(201);
    const data = (JSON.parse(text) as { data: Record<string, unknown> }).data;
    expect(data).toMatchObject({ url: `127.0.0.1:${pages.port}/good`, project: '127.0.0.1', privacy: 1 });
    for (const field of ['generated_at', 'created_at', 'updated_at'])
      expect(data[field]).toMatch(LARAVEL_TIME);
  });

  test('DELETE /api/v1/projects/{project}: the caller’s reports of it go, another user’s stay', async ({
    pages,
    call,
  }) => {
    const url = `http://localhost:${pages.port}/good`;
    for (const key of [ALICE_KEY, ALICE_KEY, BOB_KEY]) {
      const reply = await call('POST', '/api/v1/reports', { key, host: analyzer, ...form({ url }) });
      expect(reply.status, reply.text).toBe(201);
    }
    const reports = async (key: string) =>
      (
        (await call('GET', '/api/v1/reports?project=localhost', { key, host: analyzer })).json() as {
          meta: { total: number };
        }
      ).meta.total;
    expect([await reports(ALICE_KEY), await reports(BOB_KEY)]).toEqual([2, 1]);

    const reply = await call('DELETE', '/api/v1/projects/localhost', {
      host: analyzer,
      type: 'application/json',
    });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ id: 'localhost', object: 'project', deleted: true, status: 200 });
    expect([await reports(ALICE_KEY), await reports(BOB_KEY)]).toEqual([0, 1]);

    const listed = (await call('GET', '/api/v1/projects', { host: analyzer })).json() as {
      data: { project: string }[];
    };
    expect(listed.data.map((p) => p.project)).toEqual(['127.0.0.1']);
    const bobs = (await call('GET', '/api/v1/projects', { key: BOB_KEY, host: analyzer })).json() as {
      data: unknown[];
    };
    expect(bobs.data).toEqual([{ project: 'localhost', reports: 1 }]);

    const again = await call('DELETE', '/api/v1/projects/localhost', { host: analyzer });
    expect(again.status).toBe(404);
    expect(again.json()).toEqual(NOT_FOUND);
  });
});

describe('the api-key limiter example of config/gateway.yaml, enabled', () => {
  /** The shipped config with the commented api-key limiter on (3 a minute) and on the websites route. */
  const yaml = DEFAULT_CONFIG.replace(
    [
      '  # api-key:',
      '  #   message: Too Many Attempts.',
      '  #   windows:',
      "  #     - { limit: 600, period: 1m, key: ['header:Authorization'] }",
      '  # api-key-ip:',
      '  #   message: Too Many Attempts.',
      '  #   windows:',
      '  #     - { limit: 600, period: 1m, key: [ip] }',
    ].join('\n'),
    [
      '  api-key:',
      '    message: Too Many Attempts.',
      '    windows:',
      "      - { limit: 3, period: 1m, key: ['header:Authorization'] }",
      '  api-key-ip:',
      '    message: Too Many Attempts.',
      '    windows:',
      '      - { limit: 3, period: 1m, key: [ip] }',
    ].join('\n'),
  ).replace(
    "  - name: websites\n    paths: ['/*']\n    upstream: websites\n",
    "  - name: websites\n    paths: ['/*']\n    upstream: websites\n    limiters: [api-key, api-key-ip]\n",
  );

  test('a key moved from the header into ?api_token= is still counted: the IP window holds', async () => {
    expect(yaml).toContain('limiters: [api-key, api-key-ip]');
    expect(yaml).toContain('limit: 3, period: 1m, key: [ip]');
    const limited = await startGateway(yaml, embeddedEnv(newDataDir()));
    try {
      const get = (path: string, headers: Record<string, string>) =>
        send(`${limited.url()}${path}`, { headers: { accept: 'application/json', ...headers } });
      for (let i = 0; i < 3; i++) {
        expect((await get('/api/v1/websites', { authorization: `Bearer ${ALICE_KEY}` })).status).toBe(200);
      }
      const moved = await get(`/api/v1/websites?api_token=${ALICE_KEY}`, {});
      expect(moved.status).toBe(429);
      expect(moved.json()).toEqual({ error: { code: 'rate_limited', message: 'Too Many Attempts.' } });
      // In a form body too: the gateway counts the request before any body is read.
      const inForm = await send(`${limited.url()}/api/v1/websites`, {
        method: 'POST',
        headers: { accept: 'application/json', 'content-type': FORM },
        body: new URLSearchParams({ url: 'escaped.example', api_token: ALICE_KEY }).toString(),
      });
      expect(inForm.status).toBe(429);
    } finally {
      await limited.close();
    }
  });
});
