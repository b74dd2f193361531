import { describe, expect } from 'vitest';
import type { Gateway } from '../../../src/runtime/gateway.js';
import { DEFAULT_CONFIG } from '../../helpers/default-config.js';
import { ALICE_KEY, BOB_KEY, embeddedEnv, newDataDir } from '../../helpers/embedded.js';
import { embeddedTest } from '../../helpers/fixtures.js';
import { send, type Reply } from '../../helpers/gateway.js';

/** The websites API through the real gateway and its embedded service, over HTTP. */

const FORM = 'application/x-www-form-urlencoded';
const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}000Z$/);

interface Website {
  id: number;
  url: string;
  privacy: number;
  password: boolean;
  email: number;
  exclude_bots: number;
  exclude_params: string | null;
  exclude_ips: string | null;
  created_at: string;
  updated_at: string;
}

/** A record with the defaults of a store that sent only url. */
const defaults = (url: string, id: unknown = expect.any(Number)) => ({
  id,
  url,
  privacy: 1,
  password: false,
  email: 0,
  exclude_bots: 1,
  exclude_params: null,
  exclude_ips: null,
  created_at: ISO,
  updated_at: ISO,
});

const invalid = (message: Record<string, string[]>) => ({ message, status: 422 });
const NOT_FOUND = { message: 'Resource not found.', status: 404 };
const UNAUTHENTICATED = { message: 'Unauthenticated.' };

interface Call {
  key?: string | null;
  form?: Record<string, string | string[]>;
  json?: unknown;
  raw?: { type: string; body: string };
  headers?: Record<string, string>;
  /** Defaults to the file's gateway. */
  via?: Gateway;
}

const test = embeddedTest()
  /** One call as Alice (or `key`); a form body by default, as the spec's clients send. */
  .extend(
    'call',
    { scope: 'file' },
    ({ gateway }) =>
      function call(method: string, path: string, options: Call = {}): Promise<Reply> {
        const key = options.key === undefined ? ALICE_KEY : options.key;
        const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
        if (key !== null) headers.authorization = `Bearer ${key}`;
        let body: string | undefined;
        if (options.form) {
          headers['content-type'] = FORM;
          const params = new URLSearchParams();
          for (const [name, value] of Object.entries(options.form))
            for (const v of [value].flat()) params.append(name, v);
          body = params.toString();
        } else if (options.json !== undefined) {
          headers['content-type'] = 'application/json';
          body = JSON.stringify(options.json);
        } else if (options.raw) {
          headers['content-type'] = options.raw.type;
          body = options.raw.body;
        }
        return send(`${(options.via ?? gateway).url()}${path}`, { method, headers, body });
      },
  )
  .extend(
    'create',
    { scope: 'file' },
    ({ call }) =>
      async function create(form: Record<string, string>, key = ALICE_KEY): Promise<Website> {
        const reply = await call('POST', '/api/v1/websites', { form, key });
        expect(reply.status, reply.text).toBe(201);
        return (reply.json() as { data: Website }).data;
      },
  );

/** A host no other test of this file uses. */
let unique = 0;
const host = (label: string) => `${label}-${++unique}.example`;

describe('authentication', () => {
  const routes: [string, string][] = [
    ['GET', '/api/v1/websites'],
    ['POST', '/api/v1/websites'],
    ['GET', '/api/v1/websites/1'],
    ['PUT', '/api/v1/websites/1'],
    ['PATCH', '/api/v1/websites/1'],
    ['DELETE', '/api/v1/websites/1'],
    ['DELETE', '/websites/1/destroy'],
  ];

  test.for(routes)('%s %s without a key is 401, even asking for HTML', async ([method, path], { call }) => {
    const reply = await call(method, path, { key: null, headers: { accept: 'text/html' } });
    expect(reply.status).toBe(401);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(reply.json()).toEqual(UNAUTHENTICATED);
  });

  test.for(routes)('%s %s with an unknown key is 401', async ([method, path], { call }) => {
    const reply = await call(method, path, { key: 'tg_not_a_key' });
    expect(reply.status).toBe(401);
    expect(reply.json()).toEqual(UNAUTHENTICATED);
  });

  test.for<[string, string]>([
    ['another scheme', `Basic ${ALICE_KEY}`],
    ['no scheme', ALICE_KEY],
    ['an empty bearer', 'Bearer '],
    ['a key with a suffix', `Bearer ${ALICE_KEY}x`],
  ])('an Authorization header with %s is 401', async ([_, authorization], { call }) => {
    const reply = await call('GET', '/api/v1/websites', { key: null, headers: { authorization } });
    expect(reply.status).toBe(401);
    expect(reply.json()).toEqual(UNAUTHENTICATED);
  });

  test('the bearer scheme is case-insensitive', async ({ call }) => {
    const reply = await call('GET', '/api/v1/websites', {
      key: null,
      headers: { authorization: `bearer ${ALICE_KEY}` },
    });
    expect(reply.status).toBe(200);
  });
});

describe('store', () => {
  test('only url: 201 with the defaults, the body saying status 200', async ({ call }) => {
    const url = host('minimal');
    const reply = await call('POST', '/api/v1/websites', { form: { url } });
    expect(reply.status).toBe(201);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = reply.json() as { data: Website };
    expect(body).toEqual({ data: defaults(url), status: 200 });
    expect(body.data.updated_at).toBe(body.data.created_at);
  });

  test('every field, form-encoded: stored normalised, the password only as true', async ({ call }) => {
    const reply = await call('POST', '/api/v1/websites', {
      form: {
        url: 'https://www.Every-Field.example/blog/?utm=x#top',
        privacy: '2',
        password: 's3cret pass',
        email: '1',
        exclude_bots: '0',
        exclude_params: '  utm_source \n\nref\r\nfbclid\n',
        exclude_ips: '203.0.113.7\n 10.0.0.0/8 \n2001:db8::1\r\n2001:db8::/32',
      },
    });
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual({
      data: {
        ...defaults('every-field.example'),
        privacy: 2,
        password: true,
        email: 1,
        exclude_bots: 0,
        exclude_params: 'utm_source\nref\nfbclid',
        exclude_ips: '203.0.113.7\n10.0.0.0/8\n2001:db8::1\n2001:db8::/32',
      },
      status: 200,
    });
    expect(reply.text).not.toContain('s3cret');
  });

  test('a JSON body, numbers as numbers', async ({ call }) => {
    const reply = await call('POST', '/api/v1/websites', {
      json: { url: 'json-body.example', privacy: 0, email: 1, exclude_bots: 0, exclude_ips: '192.0.2.1' },
    });
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual({
      data: {
        ...defaults('json-body.example'),
        privacy: 0,
        email: 1,
        exclude_bots: 0,
        exclude_ips: '192.0.2.1',
      },
      status: 200,
    });
  });

  test('unknown fields are ignored', async ({ call }) => {
    const reply = await call('POST', '/api/v1/websites', {
      form: {
        url: 'unknown-fields.example',
        id: '999',
        user_id: '2',
        created_at: 'yesterday',
        colour: 'red',
      },
    });
    expect(reply.status).toBe(201);
    const data = (reply.json() as { data: Website }).data;
    expect(data).toEqual(defaults('unknown-fields.example'));
    expect(data.id).not.toBe(999);
  });

  test('empty exclusion lists are stored as null', async ({ call }) => {
    const reply = await call('POST', '/api/v1/websites', {
      form: { url: 'empty-lists.example', exclude_params: ' \n \n', exclude_ips: '' },
    });
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual({ data: defaults('empty-lists.example'), status: 200 });
  });

  test.for<[string, string]>([
    ['http://plain-http.example', 'plain-http.example'],
    ['HTTPS://WWW.Upper.Example/', 'upper.example'],
    ['bare-host.example', 'bare-host.example'],
    ['www.bare-www.example', 'bare-www.example'],
    ['with-port.example:8080/path?q=1', 'with-port.example'],
    ['https://sub.www-keeps.example', 'sub.www-keeps.example'],
    ['https://trailing-dot.example./', 'trailing-dot.example'],
    ['  spaced.example  ', 'spaced.example'],
    ['http://bücher-idn.example', 'xn--bcher-idn-q9a.example'],
    ['http://192.0.2.44:81/', '192.0.2.44'],
  ])('url %j is stored as %j', async ([url, stored], { call }) => {
    const reply = await call('POST', '/api/v1/websites', { form: { url } });
    expect(reply.status).toBe(201);
    expect((reply.json() as { data: Website }).data.url).toBe(stored);
  });

  test('another owner may have the same host', async ({ create }) => {
    const url = host('shared');
    await create({ url });
    const bobs = await create({ url }, BOB_KEY);
    expect(bobs.url).toBe(url);
  });

  test('a password with another privacy is kept (it takes effect with privacy 2)', async ({ call }) => {
    const url = host('pass-kept');
    const reply = await call('POST', '/api/v1/websites', { form: { url, privacy: '0', password: 'later' } });
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual({ data: { ...defaults(url), privacy: 0, password: true }, status: 200 });
  });

  test.for<[string, { type: string; body: string }, number, string]>([
    ['malformed JSON', { type: 'application/json', body: '{"url": ' }, 400, 'The JSON body is malformed.'],
    [
      'a JSON array',
      { type: 'application/json', body: '["x.example"]' },
      400,
      'The request body must be an object of fields.',
    ],
    [
      'a JSON string',
      { type: 'application/json', body: '"x.example"' },
      400,
      'The request body must be an object of fields.',
    ],
    [
      'plain text',
      { type: 'text/plain', body: 'url=x.example' },
      400,
      'The request body must be an object of fields.',
    ],
    [
      'an unsupported type',
      { type: 'application/xml', body: '<url>x.example</url>' },
      415,
      'Unsupported Content-Type: send application/json or application/x-www-form-urlencoded.',
    ],
  ])('%s: a JSON error, not a 500', async ([_, raw, status, message], { call }) => {
    const reply = await call('POST', '/api/v1/websites', { raw });
    expect(reply.status).toBe(status);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(reply.json()).toEqual({ message, status });
  });

  // The tables of 422 messages are in api-validation.unit.test.ts (the service alone); this is the one end to end.
  test('no body at all: url is required', async ({ call }) => {
    const reply = await call('POST', '/api/v1/websites');
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(invalid({ url: ['The url field is required.'] }));
  });
});

describe('show', () => {
  test('the owner sees the record', async ({ create, call }) => {
    const site = await create({ url: host('show'), email: '1' });
    const reply = await call('GET', `/api/v1/websites/${site.id}`);
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ data: site, status: 200 });
  });

  test('another owner gets the 404 of a missing record', async ({ create, call }) => {
    const site = await create({ url: host('private') });
    const reply = await call('GET', `/api/v1/websites/${site.id}`, { key: BOB_KEY });
    expect(reply.status).toBe(404);
    expect(reply.json()).toEqual(NOT_FOUND);
  });

  test.for(['999999', '0', 'abc', '1e3', '-1', '99999999999999999999'])(
    'id %j: 404',
    async (id, { call }) => {
      const reply = await call('GET', `/api/v1/websites/${id}`);
      expect(reply.status).toBe(404);
      expect(reply.json()).toEqual(NOT_FOUND);
    },
  );
});

describe('update', () => {
  test('PUT changes the fields sent and ignores url', async ({ create, call }) => {
    const site = await create({ url: host('put') });
    const reply = await call('PUT', `/api/v1/websites/${site.id}`, {
      form: {
        url: 'https://elsewhere.example',
        privacy: '0',
        email: '1',
        exclude_bots: '0',
        exclude_params: 'gclid\n',
        exclude_ips: '198.51.100.0/24',
      },
    });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({
      data: {
        ...site,
        privacy: 0,
        email: 1,
        exclude_bots: 0,
        exclude_params: 'gclid',
        exclude_ips: '198.51.100.0/24',
        updated_at: ISO,
      },
      status: 200,
    });
    const shown = await call('GET', `/api/v1/websites/${site.id}`);
    expect(shown.json()).toEqual(reply.json());
  });

  test('PATCH changes one field and keeps the others', async ({ create, call }) => {
    const site = await create({ url: host('patch'), exclude_params: 'a\nb', exclude_ips: '192.0.2.9' });
    const reply = await call('PATCH', `/api/v1/websites/${site.id}`, { form: { email: '1' } });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ data: { ...site, email: 1, updated_at: ISO }, status: 200 });
  });

  test('a JSON body', async ({ create, call }) => {
    const site = await create({ url: host('patch-json') });
    const reply = await call('PATCH', `/api/v1/websites/${site.id}`, {
      json: { exclude_bots: 0, privacy: 0 },
    });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({
      data: { ...site, exclude_bots: 0, privacy: 0, updated_at: ISO },
      status: 200,
    });
  });

  test('an empty exclusion list clears it; an absent one stays', async ({ create, call }) => {
    const site = await create({ url: host('clear'), exclude_params: 'a', exclude_ips: '192.0.2.1' });
    const reply = await call('PATCH', `/api/v1/websites/${site.id}`, { form: { exclude_params: '' } });
    expect(reply.json()).toEqual({ data: { ...site, exclude_params: null, updated_at: ISO }, status: 200 });
    const json = await call('PATCH', `/api/v1/websites/${site.id}`, { json: { exclude_ips: null } });
    expect(json.json()).toEqual({
      data: { ...site, exclude_params: null, exclude_ips: null, updated_at: ISO },
      status: 200,
    });
  });

  test('privacy 2 needs a password the first time, not once one is set', async ({ create, call }) => {
    const site = await create({ url: host('to-password') });
    const refused = await call('PATCH', `/api/v1/websites/${site.id}`, { form: { privacy: '2' } });
    expect(refused.status).toBe(422);
    expect(refused.json()).toEqual(
      invalid({ password: ['The password field is required when privacy is 2.'] }),
    );

    const set = await call('PATCH', `/api/v1/websites/${site.id}`, {
      form: { privacy: '2', password: 'pw' },
    });
    expect(set.status).toBe(200);
    expect(set.json()).toEqual({
      data: { ...site, privacy: 2, password: true, updated_at: ISO },
      status: 200,
    });

    const back = await call('PATCH', `/api/v1/websites/${site.id}`, { form: { privacy: '0' } });
    expect(back.json()).toEqual({
      data: { ...site, privacy: 0, password: true, updated_at: ISO },
      status: 200,
    });
    const again = await call('PATCH', `/api/v1/websites/${site.id}`, { form: { privacy: '2' } });
    expect(again.status).toBe(200);
    expect(again.json()).toEqual({
      data: { ...site, privacy: 2, password: true, updated_at: ISO },
      status: 200,
    });
  });

  test('an empty body changes nothing but updated_at', async ({ create, call }) => {
    const site = await create({ url: host('nothing') });
    const reply = await call('PUT', `/api/v1/websites/${site.id}`);
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ data: { ...site, updated_at: ISO }, status: 200 });
  });

  test.for(['PUT', 'PATCH'])(
    "%s of another owner's website: 404, and it is unchanged",
    async (method, { create, call }) => {
      const site = await create({ url: host('not-yours') });
      const reply = await call(method, `/api/v1/websites/${site.id}`, { key: BOB_KEY, form: { email: '1' } });
      expect(reply.status).toBe(404);
      expect(reply.json()).toEqual(NOT_FOUND);
      expect((await call('GET', `/api/v1/websites/${site.id}`)).json()).toEqual({ data: site, status: 200 });
    },
  );

  test('a missing id: 404 before validation', async ({ call }) => {
    const reply = await call('PATCH', '/api/v1/websites/987654', { form: { privacy: '9' } });
    expect(reply.status).toBe(404);
    expect(reply.json()).toEqual(NOT_FOUND);
  });

  test('a malformed body: 400', async ({ create, call }) => {
    const site = await create({ url: host('malformed-update') });
    const reply = await call('PATCH', `/api/v1/websites/${site.id}`, {
      raw: { type: 'application/json', body: '{' },
    });
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ message: 'The JSON body is malformed.', status: 400 });
  });
});

describe('delete', () => {
  test.for<[string, (id: number) => string]>([
    ['DELETE /websites/{id}/destroy (the spec)', (id: number) => `/websites/${id}/destroy`],
    ['DELETE /api/v1/websites/{id} (real clients)', (id: number) => `/api/v1/websites/${id}`],
  ])('%s', async ([_, path], { create, call }) => {
    const site = await create({ url: host('delete') });
    const reply = await call('DELETE', path(site.id));
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ id: site.id, object: 'website', deleted: true, status: 200 });

    const gone = await call('GET', `/api/v1/websites/${site.id}`);
    expect(gone.status).toBe(404);
    const twice = await call('DELETE', path(site.id));
    expect(twice.status).toBe(404);
    expect(twice.json()).toEqual(NOT_FOUND);
    // The host can be added again, under a new id: a deleted id is never reused.
    const again = await create({ url: site.url });
    expect(again.url).toBe(site.url);
    expect(again.id).toBeGreaterThan(site.id);
  });

  test.for<[string, (id: number) => string]>([
    ['/websites/%d/destroy', (id: number) => `/websites/${id}/destroy`],
    ['/api/v1/websites/%d', (id: number) => `/api/v1/websites/${id}`],
  ])('another owner cannot delete through %s', async ([_, path], { create, call }) => {
    const site = await create({ url: host('keep') });
    const reply = await call('DELETE', path(site.id), { key: BOB_KEY });
    expect(reply.status).toBe(404);
    expect(reply.json()).toEqual(NOT_FOUND);
    expect((await call('GET', `/api/v1/websites/${site.id}`)).json()).toEqual({ data: site, status: 200 });
  });

  test.for(['/websites/abc/destroy', '/api/v1/websites/abc', '/websites/424242/destroy'])(
    'DELETE %s: 404',
    async (path, { call }) => {
      const reply = await call('DELETE', path);
      expect(reply.status).toBe(404);
      expect(reply.json()).toEqual(NOT_FOUND);
    },
  );
});

describe('other paths', () => {
  test('an unknown path under /api/v1 is the 404 shape', async ({ call }) => {
    const reply = await call('GET', '/api/v1/nothing-here');
    expect(reply.status).toBe(404);
    expect(reply.json()).toEqual(NOT_FOUND);
  });

  test('the websites API does not answer on the analyzer host', async ({ create, call }) => {
    const site = await create({ url: host('other-host') });
    const reply = await call('GET', `/api/v1/websites/${site.id}`, {
      headers: { host: 'analyzer.localhost' },
    });
    expect(reply.status).toBe(404);
    expect(reply.json()).toEqual(NOT_FOUND);
  });

  test('it answers on any other host', async ({ create, call }) => {
    const site = await create({ url: host('any-host') });
    const reply = await call('GET', `/api/v1/websites/${site.id}`, {
      headers: { host: 'stats.example.net' },
    });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ data: site, status: 200 });
  });
});

/** Alice's 25 hosts of the list block, created in a shuffled order so the ids do not follow the hosts. */
const hosts = Array.from({ length: 25 }, (_, i) => `site-${String(i + 1).padStart(2, '0')}.example`);
// i*7 mod 25 visits every index once (7 and 25 are coprime).
const shuffled = hosts.map((_, i) => hosts[(i * 7) % hosts.length]!);
const extra = ['alpha-beta.example', 'percent.example', 'zulu.example'];

const listTest = test
  /** The list block's gateway of its own, so the totals are exactly what the block creates. */
  .extend('own', { scope: 'file' }, ({ gateways }) =>
    gateways.start(DEFAULT_CONFIG, embeddedEnv(newDataDir())),
  )
  /** Alice's hosts and extra ones, and one of Bob's, created through `own`; by host. */
  .extend('byHost', { scope: 'file' }, async ({ own, call }) => {
    const byHost = new Map<string, Website>();
    for (const url of [...shuffled, ...extra]) {
      const reply = await call('POST', '/api/v1/websites', { via: own, form: { url } });
      expect(reply.status).toBe(201);
      byHost.set(url, (reply.json() as { data: Website }).data);
    }
    await call('POST', '/api/v1/websites', { via: own, key: BOB_KEY, form: { url: 'bobs-only.example' } });
    return byHost;
  })
  .extend(
    'list',
    { scope: 'file' },
    ({ own, call, byHost: _created }) =>
      async (query: string, key = ALICE_KEY) =>
        call('GET', `/api/v1/websites${query}`, { via: own, key }),
  )
  .extend(
    'records',
    { scope: 'file' },
    ({ byHost }) =>
      (names: string[]) =>
        names.map((name) => byHost.get(name)!),
  );

describe('list', () => {
  /** The shipped config's services.websites.publicUrl (WEBSITES_PUBLIC_URL unset), not the Host sent. */
  const base = 'http://localhost:8080/api/v1/websites';
  const page = (query: string, n: number) => `${base}?${query}${query ? '&' : ''}page=${n}`;
  const allAsc = [...extra, ...hosts].sort();

  listTest('three pages of ten (the default), A-Z, with links and meta', async ({ list, records }) => {
    const pages = [1, 2, 3].map((n) => allAsc.slice((n - 1) * 10, n * 10));
    for (const [i, names] of pages.entries()) {
      const n = i + 1;
      const reply = await list(n === 1 ? '' : `?page=${n}`);
      expect(reply.status).toBe(200);
      expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(reply.json()).toEqual({
        data: records(names),
        links: {
          first: page('sort=asc&per_page=10', 1),
          last: page('sort=asc&per_page=10', 3),
          prev: n > 1 ? page('sort=asc&per_page=10', n - 1) : null,
          next: n < 3 ? page('sort=asc&per_page=10', n + 1) : null,
        },
        meta: {
          current_page: n,
          from: (n - 1) * 10 + 1,
          last_page: 3,
          path: base,
          per_page: 10,
          to: (n - 1) * 10 + names.length,
          total: 28,
        },
        status: 200,
      });
    }
  });

  listTest('the links keep search, sort and per_page', async ({ list, records }) => {
    const query = 'search=SITE&sort=desc&per_page=10';
    const reply = await list(`?${query}&page=2`);
    expect(reply.status).toBe(200);
    const desc = [...hosts].reverse();
    expect(reply.json()).toEqual({
      data: records(desc.slice(10, 20)),
      links: { first: page(query, 1), last: page(query, 3), prev: page(query, 1), next: page(query, 3) },
      meta: { current_page: 2, from: 11, last_page: 3, path: base, per_page: 10, to: 20, total: 25 },
      status: 200,
    });
  });

  listTest('sort=desc is Z-A, sort=asc A-Z', async ({ list, records }) => {
    const desc = await list('?sort=desc&per_page=100');
    expect((desc.json() as { data: Website[] }).data).toEqual(records([...allAsc].reverse()));
    const asc = await list('?sort=asc&per_page=100');
    expect((asc.json() as { data: Website[] }).data).toEqual(records(allAsc));
  });

  listTest('search is a case-insensitive substring of the host', async ({ list, records }) => {
    const reply = await list('?search=Site-1&per_page=100');
    expect(reply.json()).toEqual({
      data: records(hosts.slice(9, 19)),
      links: {
        first: page('search=Site-1&per_page=100&sort=asc', 1),
        last: page('search=Site-1&per_page=100&sort=asc', 1),
        prev: null,
        next: null,
      },
      meta: { current_page: 1, from: 1, last_page: 1, path: base, per_page: 100, to: 10, total: 10 },
      status: 200,
    });
  });

  listTest.for<[string, string[]]>([
    ['_', []],
    ['a-b', ['alpha-beta.example']],
    ['%', []],
    ['p_a', []],
    ['a%', []],
    ['.EXAMPLE', allAsc],
    ['nothing-like-this', []],
  ])('search %j matches literally', async ([search, expected], { list, records }) => {
    const reply = await list(`?search=${encodeURIComponent(search)}&per_page=100`);
    expect(reply.status).toBe(200);
    expect((reply.json() as { data: Website[] }).data).toEqual(records(expected));
  });

  listTest('no match: an empty page, from and to null', async ({ list }) => {
    const reply = await list('?search=zzz');
    expect(reply.json()).toEqual({
      data: [],
      links: {
        first: page('search=zzz&sort=asc&per_page=10', 1),
        last: page('search=zzz&sort=asc&per_page=10', 1),
        prev: null,
        next: null,
      },
      meta: { current_page: 1, from: null, last_page: 1, path: base, per_page: 10, to: null, total: 0 },
      status: 200,
    });
  });

  listTest('a page past the last is empty, with the way back', async ({ list }) => {
    const reply = await list('?per_page=25&page=5');
    expect(reply.json()).toEqual({
      data: [],
      links: {
        first: page('per_page=25&sort=asc', 1),
        last: page('per_page=25&sort=asc', 2),
        prev: page('per_page=25&sort=asc', 4),
        next: null,
      },
      meta: { current_page: 5, from: null, last_page: 2, path: base, per_page: 25, to: null, total: 28 },
      status: 200,
    });
  });

  listTest('a huge page reads as page 1e9: an empty page, exact numbers', async ({ list }) => {
    const reply = await list('?page=100000000000000000000');
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({
      data: [],
      links: {
        first: page('sort=asc&per_page=10', 1),
        last: page('sort=asc&per_page=10', 3),
        prev: page('sort=asc&per_page=10', 999_999_999),
        next: null,
      },
      meta: { current_page: 1e9, from: null, last_page: 3, path: base, per_page: 10, to: null, total: 28 },
      status: 200,
    });
  });

  listTest.for(['abc', '0', '-2', '1.5', ''])('page %j reads as page 1', async (n, { list, records }) => {
    const reply = await list(`?per_page=10&page=${n}`);
    const body = reply.json() as { data: Website[]; meta: { current_page: number } };
    expect(reply.status).toBe(200);
    expect(body.meta.current_page).toBe(1);
    expect(body.data).toEqual(records(allAsc.slice(0, 10)));
  });

  listTest.for<[string, number]>([
    ['10', 10],
    ['100', 28],
    ['27', 27],
  ])('per_page=%s', async ([perPage, count], { list, records }) => {
    const reply = await list(`?per_page=${perPage}`);
    expect(reply.status).toBe(200);
    const body = reply.json() as { data: Website[]; meta: { per_page: number } };
    expect(body.data).toEqual(records(allAsc.slice(0, count)));
    expect(body.meta.per_page).toBe(Number(perPage));
  });

  // As the original's controller: a per_page outside 10–100 or a sort other than asc/desc is the default.
  listTest.for<[string, string]>([
    ['per_page=5', 'per_page=10&sort=asc'],
    ['per_page=9', 'per_page=10&sort=asc'],
    ['per_page=101', 'per_page=10&sort=asc'],
    ['per_page=-10', 'per_page=10&sort=asc'],
    ['per_page=ten', 'per_page=10&sort=asc'],
    ['per_page=10.5', 'per_page=10&sort=asc'],
    ['per_page=10&per_page=20', 'per_page=10&sort=asc'],
    ['sort=foo', 'sort=asc&per_page=10'],
    ['sort=DESC', 'sort=asc&per_page=10'],
    ['sort=sideways&per_page=1', 'sort=asc&per_page=10'],
  ])('?%s reads as the defaults (sort asc, per_page 10)', async ([query, linked], { list, records }) => {
    const reply = await list(`?${query}`);
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({
      data: records(allAsc.slice(0, 10)),
      links: { first: page(linked, 1), last: page(linked, 3), prev: null, next: page(linked, 2) },
      meta: { current_page: 1, from: 1, last_page: 3, path: base, per_page: 10, to: 10, total: 28 },
      status: 200,
    });
  });

  listTest('empty search, sort and per_page mean their defaults', async ({ list, records }) => {
    const reply = await list('?search=&sort=&per_page=');
    expect(reply.status).toBe(200);
    const body = reply.json() as { data: Website[]; meta: { per_page: number; total: number } };
    expect(body.data).toEqual(records(allAsc.slice(0, 10)));
    expect(body.meta.per_page).toBe(10);
    expect(body.meta.total).toBe(28);
  });

  listTest('an owner sees only their own websites', async ({ list }) => {
    const reply = await list('', BOB_KEY);
    expect(reply.json()).toEqual({
      data: [{ ...defaults('bobs-only.example') }],
      links: {
        first: page('sort=asc&per_page=10', 1),
        last: page('sort=asc&per_page=10', 1),
        prev: null,
        next: null,
      },
      meta: { current_page: 1, from: 1, last_page: 1, path: base, per_page: 10, to: 1, total: 1 },
      status: 200,
    });
    const search = await list('?search=bobs', ALICE_KEY);
    expect((search.json() as { meta: { total: number } }).meta.total).toBe(0);
  });
});

describe('search of IDN hosts (stored in punycode)', () => {
  test('a whole Unicode label or domain finds its punycode host; a part of a label does not', async ({
    create,
    call,
  }) => {
    const site = await create({ url: 'http://www.Bücher.de/' });
    expect(site.url).toBe('xn--bcher-kva.de');
    const found = async (search: string) => {
      const reply = await call('GET', `/api/v1/websites?per_page=100&search=${encodeURIComponent(search)}`);
      expect(reply.status).toBe(200);
      return (reply.json() as { data: Website[] }).data.map((w) => w.url);
    };
    expect(await found('bücher')).toEqual(['xn--bcher-kva.de']);
    expect(await found('BÜCHER.de')).toEqual(['xn--bcher-kva.de']);
    expect(await found('xn--bcher-kva')).toEqual(['xn--bcher-kva.de']);
    // The documented limit: "büch" is not a whole label, and its punycode is not part of the host.
    expect(await found('büch')).toEqual([]);
  });
});
