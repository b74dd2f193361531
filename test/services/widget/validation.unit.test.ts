// The widget service's field validation (422 and its messages), through its routes with
// buildService + inject on a temporary SQLite file: no gateway, no Redis, no socket. The flows,
// the limiters and one 422 end to end stay in api.test.ts.
import { rmSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { test as base, describe, expect } from 'vitest';
import { servicesConfigFrom } from '../../../src/cli/services-config.js';
import { loadConfigText } from '../../../src/rules/load.js';
import { ensureWorkspace } from '../../../src/services/accounts/workspaces.js';
import { buildService, openServiceDatabase } from '../../../src/services/registry.js';
import { DEFAULT_CONFIG } from '../../helpers/default-config.js';
import { embeddedEnv, newDataDir } from '../../helpers/embedded.js';
import { silentLogger } from '../../helpers/gateway.js';

/** A reply as the integration tests read it. */
interface Reply {
  readonly status: number;
  json(): unknown;
}

interface Call {
  /** POSTs `body` (JSON) to `path`, with `headers`. */
  (path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
  /** A new visitor session of the workspace acme. */
  init(): Promise<{ token: string; session_id: string }>;
  /** How many rows of `table` the session has. */
  rows(table: string, sessionId: string): number;
}

const invalid = (fields: Record<string, string[]>) => ({
  error: { code: 'validation_failed', message: 'The given data was invalid.', fields },
});
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const test = base
  .extend('service', { scope: 'file' }, async ({}, { onCleanup }) => {
    const dataDir = newDataDir();
    const config = servicesConfigFrom(
      loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', embeddedEnv(dataDir)).config,
    );
    const db = openServiceDatabase(config, silentLogger);
    ensureWorkspace(db, 'acme');
    const app: FastifyInstance = await buildService('widget', { db, config, logger: silentLogger });
    onCleanup(async () => {
      await app.close();
      db.close();
      rmSync(dataDir, { recursive: true, force: true });
    });
    return { app, db };
  })
  .extend('call', { scope: 'file' }, ({ service: { app, db } }): Call => {
    const call = async (path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const reply = await app.inject({
        method: 'POST',
        url: path,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
      return { status: reply.statusCode, json: () => reply.json() };
    };
    return Object.assign(call, {
      async init() {
        const reply = await call('/api/v1/widget/init', { workspace: 'acme' });
        expect(reply.status).toBe(200);
        return reply.json() as { token: string; session_id: string };
      },
      rows: (table: string, sessionId: string) =>
        (
          db.prepare(`SELECT count(*) AS n FROM ${table} WHERE session_id = ?`).get(sessionId) as {
            n: number;
          }
        ).n,
    });
  });

describe('POST /api/v1/widget/init', () => {
  test('an unknown workspace or website, or malformed fields, are a 422', async ({ call }) => {
    const cases: [object, Record<string, string[]>][] = [
      [{}, { workspace: ['The workspace field is required.'] }],
      [
        { workspace: 'initech', website_id: 999_999 },
        {
          workspace: ['The selected workspace is invalid.'],
          website_id: ['The selected website_id is invalid.'],
        },
      ],
      [{ workspace: 'acme', website_id: 999_999 }, { website_id: ['The selected website_id is invalid.'] }],
      [{ workspace: 'acme', website_id: 'first' }, { website_id: ['The selected website_id is invalid.'] }],
      [
        { workspace: 'acme', page_url: 'ftp://shop.test/', locale: 'english!' },
        {
          page_url: ['The page_url field must be a valid http or https URL.'],
          locale: ['The locale field must be a language tag such as en or en-US.'],
        },
      ],
    ];
    for (const [body, fields] of cases) {
      const reply = await call('/api/v1/widget/init', body);
      expect(reply.status, JSON.stringify(body)).toBe(422);
      expect(reply.json()).toEqual(invalid(fields));
    }
  });
});

describe('conversation', () => {
  test('POST /messages refuses an empty or too long body', async ({ call }) => {
    const { token } = await call.init();
    for (const [body, message] of [
      [{ body: '   ' }, 'The body field is required.'],
      [{}, 'The body field is required.'],
      [{ body: 'x'.repeat(4001) }, 'The body field must not be greater than 4000 characters.'],
    ] as const) {
      const reply = await call('/api/v1/widget/messages', body, bearer(token));
      expect(reply.status).toBe(422);
      expect(reply.json()).toEqual(invalid({ body: [message] }));
    }
    const malformed = await call('/api/v1/widget/messages', undefined, {
      ...bearer(token),
      'content-type': 'application/json',
    });
    expect(malformed.status).toBe(400);
    expect(malformed.json()).toEqual({ error: { code: 'bad_request', message: 'The JSON body is empty.' } });
  });
});

describe('POST /api/v1/widget/events', () => {
  test('a bad item fails the whole batch, named by its index', async ({ call }) => {
    const { token, session_id } = await call.init();
    const reply = await call(
      '/api/v1/widget/events',
      { events: [{ type: 'open' }, { type: 'open' }, { type: 'open' }, { type: 'teleport' }] },
      bearer(token),
    );
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(invalid({ 'events.3.type': ['The selected type is invalid.'] }));
    expect(call.rows('widget_events', session_id)).toBe(0);
    const none = await call('/api/v1/widget/events', { events: [] }, bearer(token));
    expect(none.json()).toEqual(invalid({ events: ['The events field is required.'] }));
  });
});

describe('POST /api/v1/widget/leads', () => {
  test('refuses an invalid email and missing consent', async ({ call }) => {
    const { token } = await call.init();
    const reply = await call(
      '/api/v1/widget/leads',
      { name: 'Ann', email: 'ann@', consent: false },
      bearer(token),
    );
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(
      invalid({
        email: ['The email field must be a valid email address.'],
        consent: ['The consent field must be accepted.'],
      }),
    );
  });
});
