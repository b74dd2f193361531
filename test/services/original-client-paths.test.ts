// The paths the original service's clients use: the WordPress plugin's /api/v1/wp/* (the same
// bulk-sync handlers as /v1/wp/*) and the widget's GET /api/v1/widget/conversation/messages (the
// POST form's page, read from the query string). Over real sockets: each service alone, as
// `tollgate serve` runs it, and behind a gateway that routes these paths to it.
import { describe, expect } from 'vitest';
import { servicesConfigFrom } from '../../src/cli/services-config.js';
import { loadConfigText } from '../../src/rules/load.js';
import type { ServiceName } from '../../src/service-names.js';
import type { Gateway } from '../../src/runtime/gateway.js';
import { CHANGED_KINDS, FULL_SYNC_KINDS } from '../../src/services/bulksync/kinds.js';
import { openServiceDatabase, startService, type RunningService } from '../../src/services/registry.js';
import { createWorkspaceToken } from '../../src/services/accounts/workspaces.js';
import { DEFAULT_CONFIG } from '../helpers/default-config.js';
import { embeddedEnv, newDataDir } from '../helpers/embedded.js';
import { test as base } from '../helpers/fixtures.js';
import { gatewayYaml, send, silentLogger, type Reply } from '../helpers/gateway.js';
import { TEST_JWT_SECRET } from '../helpers/tokens.js';

/** A gateway whose only routes send these paths to the embedded services, with no limiter in the way. */
const CONFIG = gatewayYaml(`
log: { level: silent }
reload: { watch: false }
identity:
  jwt:
    secret: \${WIDGET_JWT_SECRET}
    algorithms: [HS256]
services:
  dataDir: \${DATA_DIR}
upstreams:
  bulksync: { embedded: bulksync }
  widget: { embedded: widget }
routes:
  - { name: wp, paths: ['/v1/wp/*', '/api/v1/wp/*'], upstream: bulksync }
  - { name: widget, paths: ['/api/v1/widget/*'], upstream: widget }
`);

const WP_ENDPOINTS = [
  'handshake',
  ...FULL_SYNC_KINDS.map((k) => `${k}/sync`),
  ...CHANGED_KINDS.map((k) => `${k}/changed`),
];

/** The embedded services alone, as `tollgate serve` runs them, on one database file. */
interface Services {
  readonly dataDir: string;
  readonly env: Record<string, string>;
  readonly token: string;
  readonly alone: Partial<Record<ServiceName, RunningService>>;
}

const test = base
  .extend('services', { scope: 'file' }, async ({}, { onCleanup }): Promise<Services> => {
    const dataDir = newDataDir();
    const env = { DATA_DIR: dataDir, WIDGET_JWT_SECRET: TEST_JWT_SECRET };
    const config = servicesConfigFrom(loadConfigText(CONFIG, 'test.yaml', env).config);
    const db = openServiceDatabase(config, silentLogger);
    const token = createWorkspaceToken(db, 'shop').token;
    const alone: Partial<Record<ServiceName, RunningService>> = {};
    onCleanup(async () => {
      for (const service of Object.values(alone)) await service.close();
      db.close();
    });
    for (const name of ['bulksync', 'widget'] as const) {
      alone[name] = await startService(name, { db, config, logger: silentLogger }, '127.0.0.1', 0);
    }
    return { dataDir, env, token, alone };
  })
  .extend('gateway', { scope: 'file' }, ({ services, gateways }) => gateways.start(CONFIG, services.env))
  /** The shipped config (its routes and limiters) on the same data directory. */
  .extend('shipped', { scope: 'file' }, ({ services, gateways }) =>
    gateways.start(DEFAULT_CONFIG, embeddedEnv(services.dataDir, { WIDGET_JWT_SECRET: TEST_JWT_SECRET })),
  )
  /** Each describe case's conversation, seeded by its first test. */
  .extend(
    'conversations',
    { scope: 'file' },
    (): Map<string, Promise<{ visitor: Record<string, string>; posted: unknown[] }>> => new Map(),
  );

interface Places {
  readonly services: Services;
  readonly gateway: Gateway;
}

const where = [
  [
    'the service alone',
    ({ services }: Places) =>
      (name: ServiceName) =>
        services.alone[name]!.url,
  ],
  [
    'through the gateway',
    ({ gateway }: Places) =>
      () =>
        gateway.url(),
  ],
] as const;

const post = (url: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> =>
  send(url, {
    method: 'POST',
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** The reply without what differs from one request to the next. */
const shape = (r: Reply) => ({ status: r.status, type: r.headers['content-type'], body: r.json() });

describe.each(where)('bulk sync under /api/v1/wp, %s', (_where, place) => {
  const at = (places: Places) => ({
    url: (path: string) => `${place(places)('bulksync')}${path}`,
    bearer: () => ({ authorization: `Bearer ${places.services.token}` }),
  });

  test('every endpoint answers on both paths alike: with a token (an unknown path would be 404) and without', async ({
    services,
    gateway,
  }) => {
    const { url, bearer } = at({ services, gateway });
    // Invalid for every sync endpoint (nothing is written); the handshake ignores it.
    const body = { items: 'not a list', upserted: 'not a list' };
    for (const endpoint of WP_ENDPOINTS) {
      const [spec, original] = await Promise.all(
        ['/v1/wp', '/api/v1/wp'].map((prefix) => post(url(`${prefix}/${endpoint}`), body, bearer())),
      );
      expect({ endpoint, status: original!.status }).toEqual({
        endpoint,
        status: endpoint === 'handshake' ? 200 : 422,
      });
      expect(shape(original!)).toEqual(shape(spec!));

      const [specBare, originalBare] = await Promise.all(
        ['/v1/wp', '/api/v1/wp'].map((prefix) => post(url(`${prefix}/${endpoint}`), body)),
      );
      expect(shape(originalBare!)).toEqual({
        status: 401,
        type: 'application/json; charset=utf-8',
        body: { error: { code: 'missing_token', message: 'API token missing.' } },
      });
      expect(shape(originalBare!)).toEqual(shape(specBare!));
    }
    const unknown = await post(url('/api/v1/wp/nothing'), body, bearer());
    expect(unknown.status).toBe(404);
  });

  test('the same handlers and data: a sync sent to one path is seen on the other', async ({
    services,
    gateway,
  }) => {
    const { url, bearer } = at({ services, gateway });
    const sync_id = `s-${Math.random().toString(36).slice(2)}`;
    const items = [{ id: 1, title: 'Hello', url: 'https://shop.example/hello' }];
    const synced = await post(url('/api/v1/wp/posts/sync'), { sync_id, items, done: true }, bearer());
    expect(synced.status, synced.text).toBe(200);
    expect(synced.json()).toMatchObject({ sync_id, kind: 'posts', received: 1, done: true, total: 1 });

    const [spec, original] = await Promise.all([
      post(url('/v1/wp/handshake'), undefined, bearer()),
      post(url('/api/v1/wp/handshake'), undefined, bearer()),
    ]);
    expect(original!.status).toBe(200);
    expect(original!.json()).toMatchObject({ workspace: { name: 'shop' }, counts: { posts: 1 } });
    expect(original!.json()).toEqual(spec!.json());

    // Removed through the spec's path, gone for both.
    const changed = await post(url('/v1/wp/posts/changed'), { deleted: [1] }, bearer());
    expect(changed.json()).toMatchObject({ kind: 'posts', deleted: 1, total: 0 });
    const after = await post(url('/api/v1/wp/handshake'), undefined, bearer());
    expect(after.json()).toMatchObject({ counts: { posts: 0 } });
  });

  test('the errors are the same on both paths', async ({ services, gateway }) => {
    const { url, bearer } = at({ services, gateway });
    const bad = { items: [{ id: 1, title: '', url: 'ftp://x' }] };
    for (const [body, headers] of [
      [JSON.stringify(bad), { 'content-type': 'application/json' }],
      ['items=1', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['{"items": [', { 'content-type': 'application/json' }],
    ] as const) {
      const [spec, original] = await Promise.all(
        ['/v1/wp', '/api/v1/wp'].map((prefix) =>
          send(url(`${prefix}/posts/sync`), { method: 'POST', headers: { ...headers, ...bearer() }, body }),
        ),
      );
      expect(spec!.status).toBeGreaterThanOrEqual(400);
      expect(shape(original!)).toEqual(shape(spec!));
    }
  });
});

describe.each(where)('GET /api/v1/widget/conversation/messages, %s', (where, place) => {
  async function seed(url: (path: string) => string) {
    const init = await post(url('/api/v1/widget/init'), { workspace: 'shop' });
    expect(init.status, init.text).toBe(200);
    const visitor: Record<string, string> = {
      authorization: `Bearer ${(init.json() as { token: string }).token}`,
    };
    const posted: unknown[] = [];
    for (const body of ['one', 'two', 'three']) {
      const reply = await post(url('/api/v1/widget/messages'), { body }, visitor);
      expect(reply.status).toBe(201);
      posted.push((reply.json() as { message: unknown }).message);
    }
    return { visitor, posted };
  }

  /** The case's url, its conversation (seeded once, before its first test reads it) and GET. */
  const at = async ({
    conversations,
    ...places
  }: Places & { conversations: Map<string, ReturnType<typeof seed>> }) => {
    const url = (path: string) => `${place(places)('widget')}${path}`;
    if (!conversations.has(where)) conversations.set(where, seed(url));
    const { visitor, posted } = await conversations.get(where)!;
    const get = (query: string, headers = visitor) =>
      send(url(`/api/v1/widget/conversation/messages${query}`), { headers });
    return { url, visitor, posted, get, token: places.services.token };
  };

  test('the same page as the POST form, from the query string', async ({
    services,
    gateway,
    conversations,
  }) => {
    const { url, visitor, posted, get } = await at({ services, gateway, conversations });
    const all = await get('');
    expect(shape(all)).toEqual({
      status: 200,
      type: 'application/json; charset=utf-8',
      body: { messages: posted, page: 1, per_page: 50, total: 3 },
    });
    const second = await get('?page=2&per_page=2');
    expect(second.json()).toEqual({ messages: [posted[2]], page: 2, per_page: 2, total: 3 });
    const viaPost = await post(
      url('/api/v1/widget/conversation/messages'),
      { page: 2, per_page: 2 },
      visitor,
    );
    expect(viaPost.json()).toEqual(second.json());
  });

  test('bad parameters are the same 422 as the POST form gives', async ({
    services,
    gateway,
    conversations,
  }) => {
    const { url, visitor, get } = await at({ services, gateway, conversations });
    const get422 = await get('?page=0&per_page=500');
    const post422 = await post(
      url('/api/v1/widget/conversation/messages'),
      { page: 0, per_page: 500 },
      visitor,
    );
    expect(shape(get422)).toEqual({
      status: 422,
      type: 'application/json; charset=utf-8',
      body: {
        error: {
          code: 'validation_failed',
          message: 'The given data was invalid.',
          fields: {
            page: ['The page field must be a positive integer.'],
            per_page: ['The per_page field must be an integer between 1 and 100.'],
          },
        },
      },
    });
    expect(shape(post422)).toEqual(shape(get422));
    // A parameter given twice is not an integer.
    expect((await get('?page=1&page=2')).json()).toEqual({
      error: {
        code: 'validation_failed',
        message: 'The given data was invalid.',
        fields: { page: ['The page field must be a positive integer.'] },
      },
    });
  });

  test('the visitor token is required, as on the POST form', async ({ services, gateway, conversations }) => {
    const { url, get, token } = await at({ services, gateway, conversations });
    for (const [headers, code, message] of [
      [{}, 'missing_token', 'Visitor token missing.'],
      [{ authorization: 'Bearer not-a-jwt' }, 'invalid_token', 'Visitor token is invalid.'],
      [{ authorization: `Bearer ${token}` }, 'invalid_token', 'Visitor token is invalid.'],
    ] as const) {
      const got = await get('', headers);
      expect(shape(got)).toEqual({
        status: 401,
        type: 'application/json; charset=utf-8',
        body: { error: { code, message } },
      });
      const viaPost = await post(url('/api/v1/widget/conversation/messages'), undefined, headers);
      expect(shape(viaPost)).toEqual(shape(got));
    }
  });
});

describe('through the shipped config (its routes and limiters)', () => {
  test('/api/v1/wp/handshake reaches bulk sync, counted by the wp-plugin limiter', async ({
    shipped,
    services: { token },
  }) => {
    const reply = await post(`${shipped.url()}/api/v1/wp/handshake`, undefined, {
      authorization: `Bearer ${token}`,
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json()).toMatchObject({ workspace: { name: 'shop' } });
    expect(reply.headers['x-ratelimit-limit']).toBe('60');
  });

  test('GET /api/v1/widget/conversation/messages reaches the widget, counted per session', async ({
    shipped,
  }) => {
    const init = await post(`${shipped.url()}/api/v1/widget/init`, { workspace: 'shop' });
    expect(init.status, init.text).toBe(200);
    const authorization = `Bearer ${(init.json() as { token: string }).token}`;
    const reply = await send(`${shipped.url()}/api/v1/widget/conversation/messages?per_page=5`, {
      headers: { authorization },
    });
    expect(shape(reply)).toEqual({
      status: 200,
      type: 'application/json; charset=utf-8',
      body: { messages: [], page: 1, per_page: 5, total: 0 },
    });
    expect(reply.headers['x-ratelimit-limit']).toBe('300');
  });
});
