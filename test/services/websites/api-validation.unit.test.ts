// The websites API's field validation (422 and its messages), through the service's routes with
// buildService + inject on a temporary SQLite file: no gateway, no socket. The service checks the
// API key itself. Authentication through the gateway, routing by host and one 422 end to end stay
// in api.test.ts.
import { rmSync } from 'node:fs';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { test as base, describe, expect } from 'vitest';
import { servicesConfigFrom } from '../../../src/cli/services-config.js';
import { loadConfigText } from '../../../src/rules/load.js';
import { buildService, openServiceDatabase } from '../../../src/services/registry.js';
import { DEFAULT_CONFIG } from '../../helpers/default-config.js';
import { ALICE_KEY, embeddedEnv, newDataDir } from '../../helpers/embedded.js';
import { silentLogger } from '../../helpers/gateway.js';

const FORM = 'application/x-www-form-urlencoded';

interface Website {
  id: number;
}

interface Call {
  form?: Record<string, string | string[]>;
  json?: unknown;
  raw?: { type: string; body: string };
}

/** A status and a JSON body, as the integration tests' replies read them. */
interface Reply {
  readonly status: number;
  json(): unknown;
}

const invalid = (message: Record<string, string[]>) => ({ message, status: 422 });

const test = base
  .extend('app', { scope: 'file' }, async ({}, { onCleanup }): Promise<FastifyInstance> => {
    const dataDir = newDataDir();
    const config = servicesConfigFrom(
      loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', embeddedEnv(dataDir)).config,
    );
    const db = openServiceDatabase(config, silentLogger);
    const app = await buildService('websites', { db, config, logger: silentLogger });
    onCleanup(async () => {
      await app.close();
      db.close();
      rmSync(dataDir, { recursive: true, force: true });
    });
    return app;
  })
  /** One call as Alice; a form body by default, as the spec's clients send. */
  .extend(
    'call',
    { scope: 'file' },
    ({ app }) =>
      async function call(method: string, path: string, options: Call = {}): Promise<Reply> {
        const headers: Record<string, string> = {
          accept: 'application/json',
          authorization: `Bearer ${ALICE_KEY}`,
        };
        let payload: string | undefined;
        if (options.form) {
          headers['content-type'] = FORM;
          const params = new URLSearchParams();
          for (const [name, value] of Object.entries(options.form))
            for (const v of [value].flat()) params.append(name, v);
          payload = params.toString();
        } else if (options.json !== undefined) {
          headers['content-type'] = 'application/json';
          payload = JSON.stringify(options.json);
        } else if (options.raw) {
          headers['content-type'] = options.raw.type;
          payload = options.raw.body;
        }
        const reply: LightMyRequestResponse = await app.inject({
          method: method as 'GET',
          url: path,
          headers,
          ...(payload === undefined ? {} : { payload }),
        });
        expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
        return { status: reply.statusCode, json: () => reply.json() };
      },
  )
  .extend(
    'create',
    { scope: 'file' },
    ({ call }) =>
      async function create(form: Record<string, string>): Promise<Website> {
        const reply = await call('POST', '/api/v1/websites', { form });
        expect(reply.status, JSON.stringify(reply.json())).toBe(201);
        return (reply.json() as { data: Website }).data;
      },
  );

/** A host no other test of this file uses (a counter per file: the unit project shares modules). */
const host = (() => {
  let unique = 0;
  return (label: string) => `${label}-${++unique}.example`;
})();

describe('store', () => {
  test.for<[string, Record<string, string | string[]>, string]>([
    ['missing', {}, 'The url field is required.'],
    ['empty', { url: '' }, 'The url field is required.'],
    ['blank', { url: '   ' }, 'The url field is required.'],
    ['ftp', { url: 'ftp://files.example' }, 'The url field must be a valid URL.'],
    ['javascript', { url: 'javascript:alert(1)' }, 'The url field must be a valid URL.'],
    ['mailto', { url: 'mailto:someone@example.com' }, 'The url field must be a valid URL.'],
    ['words', { url: 'not a host' }, 'The url field must be a valid URL.'],
    ['no host', { url: 'http://' }, 'The url field must be a valid URL.'],
    ['empty label', { url: 'https://a..example' }, 'The url field must be a valid URL.'],
    ['credentials', { url: 'https://user:pw@creds.example' }, 'The url field must be a valid URL.'],
    ['three-part IPv4', { url: '1.2.3' }, 'The url field must be a valid URL.'],
    ['hex IPv4', { url: 'http://0x7f.1/' }, 'The url field must be a valid URL.'],
    ['www. alone', { url: 'www.' }, 'The url field must be a valid URL.'],
    ['underscore labels', { url: '_._' }, 'The url field must be a valid URL.'],
    [
      'too long',
      { url: `${'a'.repeat(2050)}.example` },
      'The url field must not be greater than 2048 characters.',
    ],
    ['an array', { url: ['a.example', 'b.example'] }, 'The url field is required.'],
  ])('url %s: 422', async ([_, form, message], { call }) => {
    const reply = await call('POST', '/api/v1/websites', { form });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(invalid({ url: [message] }));
  });

  test('a host the owner already has is refused, however it is written', async ({ create, call }) => {
    await create({ url: 'https://taken.example' });
    for (const url of ['taken.example', 'http://www.TAKEN.example/other', 'taken.example:8443']) {
      const reply = await call('POST', '/api/v1/websites', { form: { url } });
      expect(reply.status).toBe(422);
      expect(reply.json()).toEqual(invalid({ url: ['The url has already been taken.'] }));
    }
  });

  test.for<[string, string, string]>([
    ['privacy', '3', 'The selected privacy is invalid.'],
    ['privacy', '-1', 'The selected privacy is invalid.'],
    ['privacy', 'public', 'The selected privacy is invalid.'],
    ['privacy', '1.5', 'The selected privacy is invalid.'],
    ['privacy', ' 1', 'The selected privacy is invalid.'],
    ['email', '1\t', 'The selected email is invalid.'],
    ['email', '2', 'The selected email is invalid.'],
    ['email', 'yes', 'The selected email is invalid.'],
    ['exclude_bots', '5', 'The selected exclude_bots is invalid.'],
    [
      'exclude_params',
      'utm_source\nbad name',
      'The exclude_params field has an invalid parameter name: "bad name".',
    ],
    ['exclude_params', 'a=b', 'The exclude_params field has an invalid parameter name: "a=b".'],
    [
      'exclude_params',
      `ok\n${'p'.repeat(256)}`,
      `The exclude_params field has an invalid parameter name: "${'p'.repeat(256)}".`,
    ],
    [
      'exclude_ips',
      '192.0.2.1\n300.1.1.1',
      'The exclude_ips field has an invalid IP address or CIDR range: "300.1.1.1".',
    ],
    [
      'exclude_ips',
      '10.0.0.0/33',
      'The exclude_ips field has an invalid IP address or CIDR range: "10.0.0.0/33".',
    ],
    ['exclude_ips', '127.1', 'The exclude_ips field has an invalid IP address or CIDR range: "127.1".'],
    [
      'exclude_ips',
      '1.2.3.4/08',
      'The exclude_ips field has an invalid IP address or CIDR range: "1.2.3.4/08".',
    ],
    [
      'exclude_ips',
      'example.com',
      'The exclude_ips field has an invalid IP address or CIDR range: "example.com".',
    ],
    ['password', 'x'.repeat(256), 'The password field must not be greater than 255 characters.'],
  ])('%s %j: 422', async ([field, value, message], { call }) => {
    const reply = await call('POST', '/api/v1/websites', { form: { url: host('invalid'), [field]: value } });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(invalid({ [field]: [message] }));
  });

  test('a JSON value of the wrong type: 422', async ({ call }) => {
    const reply = await call('POST', '/api/v1/websites', {
      json: { url: host('types'), password: 1234, exclude_params: ['a'], email: true },
    });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(
      invalid({
        password: ['The password field must be a string.'],
        exclude_params: ['The exclude_params field must be a string.'],
        email: ['The selected email is invalid.'],
      }),
    );
  });

  test('privacy 2 without a password: 422', async ({ call }) => {
    const reply = await call('POST', '/api/v1/websites', { form: { url: host('nopass'), privacy: '2' } });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(
      invalid({ password: ['The password field is required when privacy is 2.'] }),
    );
  });

  test('every failing field in one 422', async ({ call }) => {
    const reply = await call('POST', '/api/v1/websites', {
      form: { privacy: '7', email: '3', exclude_bots: 'x', exclude_ips: 'nope' },
    });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(
      invalid({
        url: ['The url field is required.'],
        privacy: ['The selected privacy is invalid.'],
        email: ['The selected email is invalid.'],
        exclude_bots: ['The selected exclude_bots is invalid.'],
        exclude_ips: ['The exclude_ips field has an invalid IP address or CIDR range: "nope".'],
      }),
    );
  });

  test('a taken host and a missing password together', async ({ create, call }) => {
    const url = host('both');
    await create({ url });
    const reply = await call('POST', '/api/v1/websites', { form: { url, privacy: '2' } });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(
      invalid({
        url: ['The url has already been taken.'],
        password: ['The password field is required when privacy is 2.'],
      }),
    );
  });

  test('no body at all: url is required', async ({ call }) => {
    const reply = await call('POST', '/api/v1/websites');
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(invalid({ url: ['The url field is required.'] }));
  });

  test('JSON null counts as no fields', async ({ call }) => {
    const reply = await call('POST', '/api/v1/websites', { raw: { type: 'application/json', body: 'null' } });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(invalid({ url: ['The url field is required.'] }));
  });
});

describe('update', () => {
  test('an empty password is no password', async ({ create, call }) => {
    const site = await create({ url: host('empty-pass') });
    const reply = await call('PUT', `/api/v1/websites/${site.id}`, { form: { privacy: '2', password: '' } });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(
      invalid({ password: ['The password field is required when privacy is 2.'] }),
    );
  });

  test('invalid fields: 422, and nothing changes', async ({ create, call }) => {
    const site = await create({ url: host('bad-update') });
    const reply = await call('PUT', `/api/v1/websites/${site.id}`, {
      form: { privacy: '9', email: '1', exclude_ips: '10.0.0.300' },
    });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(
      invalid({
        privacy: ['The selected privacy is invalid.'],
        exclude_ips: ['The exclude_ips field has an invalid IP address or CIDR range: "10.0.0.300".'],
      }),
    );
    expect((await call('GET', `/api/v1/websites/${site.id}`)).json()).toEqual({ data: site, status: 200 });
  });
});

describe('list', () => {
  test.for<[string, Record<string, string[]>]>([
    ['search=a&search=b', { search: ['The search field must be a string.'] }],
    [`search=${'s'.repeat(256)}`, { search: ['The search field must not be greater than 255 characters.'] }],
  ])('?%s: 422', async ([query, message], { call }) => {
    const reply = await call('GET', `/api/v1/websites?${query}`);
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual(invalid(message));
  });
});
