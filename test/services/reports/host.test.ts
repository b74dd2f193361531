import { expect } from 'vitest';
import { test } from '../../helpers/fixtures.js';
import { DEFAULT_CONFIG } from '../../helpers/default-config.js';
import { ALICE_KEY, embeddedEnv, newDataDir } from '../../helpers/embedded.js';
import { send } from '../../helpers/gateway.js';

/** The analyzer host comes from REPORTS_HOST, else the host of REPORTS_PUBLIC_URL: routes and links. */

const list = (gatewayUrl: string, host: string) =>
  send(`${gatewayUrl}/api/v1/reports?per_page=10`, {
    headers: { host, accept: 'application/json', authorization: `Bearer ${ALICE_KEY}` },
  });

const emptyList = (base: string) => ({
  data: [],
  links: {
    first: `${base}/api/v1/reports?per_page=10&sort=desc&page=1`,
    last: `${base}/api/v1/reports?per_page=10&sort=desc&page=1`,
    prev: null,
    next: null,
  },
  meta: {
    current_page: 1,
    from: null,
    last_page: 1,
    path: `${base}/api/v1/reports`,
    per_page: 10,
    to: null,
    total: 0,
  },
  status: 200,
});

test('REPORTS_PUBLIC_URL alone: its host serves the reports API, and the links point there', async ({
  gateways,
}) => {
  const gateway = await gateways.start(
    DEFAULT_CONFIG,
    embeddedEnv(newDataDir(), { REPORTS_PUBLIC_URL: 'https://analyzer.example.com' }),
  );
  const reply = await list(gateway.url(), 'analyzer.example.com');
  expect(reply.status).toBe(200);
  expect(reply.json()).toEqual(emptyList('https://analyzer.example.com'));

  // The old default host is now the websites host's: its 404 says where reports live.
  const lost = await list(gateway.url(), 'analyzer.localhost');
  expect(lost.status).toBe(404);
  expect(lost.json()).toEqual({
    message:
      'Resource not found. The reports API answers on its own host: send this request to https://analyzer.example.com.',
    status: 404,
  });
});

test('REPORTS_HOST alone: the routes answer on it, and the links are http://<host>:8080', async ({
  gateways,
}) => {
  const gateway = await gateways.start(
    DEFAULT_CONFIG,
    embeddedEnv(newDataDir(), { REPORTS_HOST: 'reports.example.org' }),
  );
  const reply = await list(gateway.url(), 'reports.example.org');
  expect(reply.status).toBe(200);
  expect(reply.json()).toEqual(emptyList('http://reports.example.org:8080'));
  // Report pages on the same host: the owner's list wants a sign-in.
  const page = await send(`${gateway.url()}/`, { headers: { host: 'reports.example.org' } });
  expect(page.status).toBe(303);
  expect(page.headers.location).toBe('/_/login?next=%2F');
});

test('REPORTS_HOST wins over the host of REPORTS_PUBLIC_URL', async ({ gateways }) => {
  const gateway = await gateways.start(
    DEFAULT_CONFIG,
    embeddedEnv(newDataDir(), {
      REPORTS_HOST: 'internal.analyzer',
      REPORTS_PUBLIC_URL: 'https://analyzer.example.com',
    }),
  );
  const reply = await list(gateway.url(), 'internal.analyzer');
  expect(reply.status).toBe(200);
  expect(reply.json()).toEqual(emptyList('https://analyzer.example.com'));
  expect((await list(gateway.url(), 'analyzer.example.com')).status).toBe(404);
});
