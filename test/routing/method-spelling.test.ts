// Finding 7 of issue 18: a lower-case method escaped a route's limit (`post` matched no POST route
// and was forwarded as sent; an upstream reading methods case-insensitively served it as POST).
// Now every spelling is counted as the method, and a spelling with a lower-case letter is refused
// (400 invalid_method) after counting: on HTTP/2, and through Caddy to a decision listener.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { CaddyProcess } from '../helpers/caddy.js';
import { CaseBlindUpstream } from '../helpers/case-blind-upstream.js';
import { selfSigned } from '../helpers/certificates.js';
import { test as base } from '../helpers/fixtures.js';
import { REDIS_STORE } from '../helpers/gateway.js';
import { h2Request, h2Session } from '../helpers/h2-client.js';
import { exampleFor } from '../helpers/proxy-process.js';
import { rawRequest } from '../helpers/raw-http.js';
import { readFileSync } from 'node:fs';
import type { Reply } from '../helpers/gateway.js';

const LIMIT = 5;
/** 12 POSTs in mixed spellings, as the attack sent them. */
const SPELLINGS = [
  'post',
  'POST',
  'Post',
  'pOsT',
  'POST',
  'post',
  'POST',
  'Post',
  'POST',
  'post',
  'POST',
  'pOST',
];

function config(cert: string, key: string): string {
  const tls = JSON.stringify({ name: 'tls', host: '127.0.0.1', port: 0, tls: { cert, key } });
  return `
listeners:
  - { name: public, host: 127.0.0.1, port: 0 }
  - ${tls}
  - { name: decision, host: 127.0.0.1, port: 0, mode: decision }
${REDIS_STORE}
identity: { trustedProxies: ['127.0.0.1'] }
upstreams: { app: { url: '\${APP_URL}' } }
limiters:
  login: { windows: [{ limit: ${LIMIT}, period: 1m, key: [ip, 'header:X-Run'] }] }
routes:
  - { name: login, methods: [POST], paths: [/login], upstream: app, limiters: [login] }
  - { name: all, paths: ['/*'], upstream: app }
`;
}

const test = base
  .extend('app', { scope: 'file' }, async ({}, { onCleanup }) => {
    const app = await CaseBlindUpstream.start();
    onCleanup(() => app.close());
    return app;
  })
  .extend('certificate', { scope: 'file' }, () =>
    selfSigned(mkdtempSync(join(tmpdir(), 'tollgate-method-')), 'server'),
  )
  .extend('gateway', { scope: 'file' }, ({ gatewayEnv, gateways, app, certificate }) =>
    gateways.start(config(certificate.cert, certificate.key), { ...gatewayEnv, APP_URL: app.url }),
  )
  .extend('caddy', { scope: 'file' }, async ({ gateway, app }, { onCleanup }) => {
    const example = readFileSync('docs/examples/Caddyfile', 'utf8');
    const host = (url: string) => new URL(url).host;
    const caddy = await CaddyProcess.start(exampleFor(example, host(gateway.url('decision')), host(app.url)));
    onCleanup(() => caddy.stop());
    return caddy;
  });

/** What each of the 12 must get: the first LIMIT counted (canonical served, others 400), then 429. */
function expectExactLimit(replies: readonly Reply[]): void {
  expect(replies.map((r) => r.status)).toEqual(
    SPELLINGS.map((m, i) => (i >= LIMIT ? 429 : m === 'POST' ? 200 : 400)),
  );
  replies.forEach((reply, i) => {
    if (i < LIMIT) expect(reply.headers['x-ratelimit-remaining'], `request ${i}`).toBe(String(LIMIT - 1 - i));
    if (reply.status !== 400) return;
    expect(JSON.parse(reply.text)).toEqual({
      error: {
        code: 'invalid_method',
        message: `The method "${SPELLINGS[i]}" is spelled with lower-case letters; send "POST".`,
      },
    });
  });
}

describe('a lower-case method is counted as the method, then refused', () => {
  test('HTTP/1.1: Node refuses the request line before the gateway reads it; nothing is forwarded', async ({
    gateway,
    app,
  }) => {
    const path = `/login?run=${randomUUID()}`;
    for (const method of ['post', 'Post']) {
      const reply = await rawRequest(gateway.url('public'), method, path, { 'x-run': path });
      expect(reply.status).toBe(400);
    }
    expect(app.served.filter((r) => r.path === path)).toEqual([]);
  });

  test(`HTTP/2: 12 POST /login in mixed spellings against a limit of ${LIMIT}`, async ({
    gateway,
    app,
    certificate,
  }) => {
    const path = `/login?run=${randomUUID()}`;
    const session = await h2Session(gateway.url('tls'), certificate.pem);
    try {
      const replies: Reply[] = [];
      for (const method of SPELLINGS) {
        const reply = await h2Request(session, { ':method': method, ':path': path, 'x-run': path });
        replies.push({ ...reply, json: () => JSON.parse(reply.text) as unknown });
      }
      expectExactLimit(replies);
    } finally {
      session.close();
    }
    expect(app.served.filter((r) => r.path === path).map((r) => r.method)).toEqual(['POST', 'POST']);
    expect(app.servedAs('POST', path)).toBe(2);
  });

  test(`through Caddy to a decision listener: 12 POST /login in mixed spellings against a limit of ${LIMIT}`, async ({
    caddy,
    app,
  }) => {
    const path = `/login?run=${randomUUID()}`;
    const replies: Reply[] = [];
    for (const method of SPELLINGS)
      replies.push(await rawRequest(caddy.url, method, path, { 'x-run': path }));
    expectExactLimit(replies);
    expect(app.served.filter((r) => r.path === path).map((r) => r.method)).toEqual(['POST', 'POST']);
  });
});
