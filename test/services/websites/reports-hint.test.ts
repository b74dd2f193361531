import { expect } from 'vitest';
import { test } from '../../helpers/fixtures.js';
import { DEFAULT_CONFIG } from '../../helpers/default-config.js';
import { ALICE_KEY, embeddedEnv, newDataDir } from '../../helpers/embedded.js';
import { send } from '../../helpers/gateway.js';

/** A reports call without the analyzer Host reaches the websites service: its 404 says where to go. */

const HINT = {
  message:
    'Resource not found. The reports API answers on its own host: send this request to http://analyzer.localhost:8080.',
  status: 404,
};

test('reports and projects paths on the websites host: the 404 names the analyzer host', async ({
  gateways,
}) => {
  const gateway = await gateways.start(DEFAULT_CONFIG, embeddedEnv(newDataDir()));
  const headers = { accept: 'application/json', authorization: `Bearer ${ALICE_KEY}` };
  for (const [method, path] of [
    ['GET', '/api/v1/reports'],
    ['GET', '/api/v1/reports/7'],
    ['POST', '/api/v1/reports'],
    ['DELETE', '/api/v1/reports/7'],
    ['GET', '/api/v1/projects'],
    ['DELETE', '/api/v1/projects/example.com'],
  ] as const) {
    const reply = await send(`${gateway.url()}${path}`, { method, headers });
    expect([method, path, reply.status, reply.headers['content-type'], reply.json()]).toEqual([
      method,
      path,
      404,
      'application/json; charset=utf-8',
      HINT,
    ]);
  }
  // Without a key too: the hint is no secret, and an unknown path stays the plain 404.
  expect((await send(`${gateway.url()}/api/v1/reports`)).json()).toEqual(HINT);
  expect((await send(`${gateway.url()}/api/v1/nothing`, { headers })).json()).toEqual({
    message: 'Resource not found.',
    status: 404,
  });
});
