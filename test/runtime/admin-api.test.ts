import type { Server } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, test as base } from 'vitest';
import { adminUrl, startAdminServer } from '../../src/runtime/admin.js';
import { ADMIN_BODY_LIMIT, readAdminJson, type AdminRoute } from '../../src/runtime/admin-api.js';
import { sendJson } from '../../src/http/responses.js';

const TOKEN = 'admin-secret-0123456789';

/** Echoes what a write route received: its rest of the path and its JSON body. */
const ROUTES: AdminRoute[] = [
  { method: 'GET', path: '/v1/things', handle: (_req, res) => sendJson(res, 200, '{"things":[]}') },
  {
    method: 'PUT',
    path: '/v1/things/',
    handle: async (req, res, rest) => {
      const body = await readAdminJson(req, res);
      if (body !== undefined) sendJson(res, 200, JSON.stringify({ rest, body }));
    },
  },
];

const metrics = { contentType: 'text/plain', metrics: () => Promise.resolve('up 1\n') };

async function open(token: string | undefined, onCleanup: (fn: () => void) => void): Promise<string> {
  const server: Server = await startAdminServer('127.0.0.1', 0, metrics, { routes: ROUTES, token });
  onCleanup(() => server.close());
  return adminUrl(server);
}

const test = base
  .extend('admin', { scope: 'file' }, ({}, { onCleanup }) => open(TOKEN, onCleanup))
  .extend('readOnlyAdmin', { scope: 'file' }, ({}, { onCleanup }) => open(undefined, onCleanup));

const put = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'PUT', body, headers: { 'content-type': 'application/json', ...headers } });
const bearer = { authorization: `Bearer ${TOKEN}` };

describe('the admin API', () => {
  test('serves reads without the token, and /metrics and /healthz as before', async ({ admin }) => {
    const things = await fetch(`${admin}/v1/things`);
    expect(things.status).toBe(200);
    expect(await things.json()).toEqual({ things: [] });
    expect(await (await fetch(`${admin}/metrics`)).text()).toBe('up 1\n');
    expect(await (await fetch(`${admin}/healthz`)).json()).toEqual({ status: 'ok' });
  });

  test('a write with the token reaches its route, with the rest of the path and the body', async ({
    admin,
  }) => {
    const res = await put(`${admin}/v1/things/a%20b`, '{"limit":5}', bearer);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ rest: 'a%20b', body: { limit: 5 } });
  });

  test('a write without the token, or with another, is 401 in the error shape', async ({ admin }) => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong' },
      { authorization: `Basic ${TOKEN}` },
    ];
    for (const headers of attempts) {
      const res = await put(`${admin}/v1/things/x`, '{}', headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="tollgate-admin"');
      expect(await res.json()).toEqual({
        error: { code: 'unauthorized', message: 'Send "Authorization: Bearer <admin token>".' },
      });
    }
  });

  test('with no token configured the API is read-only: writes are 403', async ({ readOnlyAdmin }) => {
    const res = await put(`${readOnlyAdmin}/v1/things/x`, '{}', bearer);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      error: { code: 'admin_disabled', message: 'Set admin.token (ADMIN_TOKEN) to change anything here.' },
    });
  });

  test('unknown paths are 404; a known path with another method is 405 with Allow', async ({ admin }) => {
    expect((await fetch(`${admin}/v1/nothing`)).status).toBe(404);
    const wrong = await fetch(`${admin}/v1/things`, { method: 'DELETE', headers: bearer });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
    const metricsPost = await fetch(`${admin}/metrics`, { method: 'POST' });
    expect(metricsPost.status).toBe(405);
    expect(metricsPost.headers.get('allow')).toBe('GET');
  });

  test('a body that is not JSON is 400; one past the bound is 413 and the connection closes', async ({
    admin,
  }) => {
    const bad = await put(`${admin}/v1/things/x`, '{nope', bearer);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: { code: 'invalid_json', message: 'The body is not JSON.' } });
    const big = await put(`${admin}/v1/things/x`, `"${'a'.repeat(ADMIN_BODY_LIMIT)}"`, bearer);
    expect(big.status).toBe(413);
    expect(big.headers.get('connection')).toBe('close');
  });

  test('a client that sends half a body and goes away leaves the listener serving', async ({ admin }) => {
    const { port } = new URL(admin);
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `PUT /v1/things/x HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 100\r\n\r\n{"a":`,
          () => {
            socket.destroy();
            resolve();
          },
        );
      });
      socket.on('error', reject);
    });
    expect((await fetch(`${admin}/healthz`)).status).toBe(200);
  });
});
