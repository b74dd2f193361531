// tollgate as the decision service of real proxies: Debian's nginx (auth_request) and Caddy
// (forward_auth), each run from the shipped example config (docs/examples/), in front of the
// counting test upstream.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent } from 'undici';
import { describe, expect } from 'vitest';
import { burst } from '../helpers/burst.js';
import { CaddyProcess } from '../helpers/caddy.js';
import { gatewayTest } from '../helpers/fixtures.js';
import { forwardAuthConfig, GOOD_TOKEN, INVALID_TOKEN_BODY, LIMITED_BODY } from '../helpers/forward-auth.js';
import { limitHeaders, send } from '../helpers/gateway.js';
import { NginxProcess } from '../helpers/nginx.js';
import { exampleFor } from '../helpers/proxy-process.js';

const LIMIT = 3;
const hostOf = (url: string) => new URL(url).host;

interface Proxy {
  readonly url: string;
}

/** A real proxy run from its shipped example (docs/examples/), asking `gatewayUrl` and forwarding to `upstreamUrl`. */
async function startExample(
  example: string,
  start: (config: string) => Promise<Proxy & { stop(): Promise<void> }>,
  gatewayUrl: string,
  upstreamUrl: string,
  onCleanup: (stop: () => Promise<void>) => void,
): Promise<Proxy> {
  const config = readFileSync(`docs/examples/${example}`, 'utf8');
  const proxy = await start(exampleFor(config, hostOf(gatewayUrl), hostOf(upstreamUrl)));
  onCleanup(() => proxy.stop());
  return proxy;
}

const test = gatewayTest({ config: forwardAuthConfig(LIMIT) })
  .extend('nginx', { scope: 'file' }, ({ gateway, upstream }, { onCleanup }) =>
    startExample('nginx.conf', (c) => NginxProcess.start(c), gateway.url('nginx'), upstream.url, onCleanup),
  )
  .extend('caddy', { scope: 'file' }, ({ gateway, upstream }, { onCleanup }) =>
    startExample('Caddyfile', (c) => CaddyProcess.start(c), gateway.url('decision'), upstream.url, onCleanup),
  );

const through = (proxy: Proxy, path: string, headers: Record<string, string>, dispatcher?: Agent) =>
  send(`${proxy.url}${path}`, { headers: { host: 'app.test', ...headers }, dispatcher });

for (const name of ['nginx', 'caddy'] as const) {
  describe(`through ${name}`, () => {
    test('an allowed request reaches the upstream, and the client gets X-RateLimit-*', async ({
      nginx,
      caddy,
      upstream,
    }) => {
      const proxy = name === 'nginx' ? nginx : caddy;
      const run = randomUUID();
      const reply = await through(proxy, '/run/hello?x=1', { 'x-run': run });
      expect(reply.status).toBe(200);
      expect(limitHeaders(reply)).toEqual({
        'x-ratelimit-limit': String(LIMIT),
        'x-ratelimit-remaining': String(LIMIT - 1),
        'x-ratelimit-reset': expect.stringMatching(/^\d+$/),
      });
      const seen = upstream.seen.filter((r) => r.headers['x-run'] === run);
      expect(seen.map((r) => [r.method, r.url])).toEqual([['GET', '/run/hello?x=1']]);
    });

    test(`exactly ${LIMIT} of 20 concurrent requests pass; the others get the exact 429`, async ({
      nginx,
      caddy,
      upstream,
    }) => {
      const proxy = name === 'nginx' ? nginx : caddy;
      const run = randomUUID();
      const agent = new Agent({ connections: 20 });
      try {
        const replies = await burst(20, () => through(proxy, '/run/burst', { 'x-run': run }, agent), 20);
        const passed = replies.filter((r) => r.status === 200);
        const refused = replies.filter((r) => r.status !== 200);
        expect(passed.length).toBe(LIMIT);
        expect(upstream.seen.filter((r) => r.headers['x-run'] === run).length).toBe(LIMIT);
        expect(new Set(passed.map((r) => r.headers['x-ratelimit-remaining']))).toEqual(
          new Set(Array.from({ length: LIMIT }, (_, i) => String(i))),
        );
        for (const reply of refused) {
          expect(reply.status).toBe(429);
          expect(reply.text).toBe(LIMITED_BODY);
          expect(reply.headers['content-type']).toBe('application/json');
          // nginx answers the body whole; Caddy copies it as it streams (no Content-Length).
          if (name === 'nginx') expect(reply.headers['content-length']).toBe(String(LIMITED_BODY.length));
          expect(reply.headers['x-ratelimit-limit']).toBe(String(LIMIT));
          expect(reply.headers['x-ratelimit-remaining']).toBe('0');
          expect(reply.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
          expect(Number(reply.headers['retry-after'])).toBeGreaterThanOrEqual(1);
          expect(Number(reply.headers['retry-after'])).toBeLessThanOrEqual(60);
          expect(reply.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
        }
      } finally {
        await agent.close();
      }
    });

    test('a client naming another path in forward headers of its own is not believed', async ({
      nginx,
      caddy,
      upstream,
    }) => {
      const proxy = name === 'nginx' ? nginx : caddy;
      const run = randomUUID();
      // nginx clears X-Forwarded-Uri and -Method (the example config); Caddy sets them, and the
      // client's X-Original-URI beside them makes the question ambiguous: refused.
      const spoof: Record<string, string> =
        name === 'nginx'
          ? { 'x-forwarded-uri': '/open/free', 'x-forwarded-method': 'GET' }
          : { 'x-original-uri': '/open/free', 'x-original-method': 'GET' };
      const reply = await through(proxy, '/run/costly', { 'x-run': run, ...spoof });
      if (name === 'nginx') {
        expect(reply.status).toBe(200);
        expect(reply.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1));
        expect(upstream.seen.filter((r) => r.headers['x-run'] === run).length).toBe(1);
      } else {
        expect(reply.status).toBe(400);
        expect((reply.json() as { error: { code: string } }).error.code).toBe('invalid_original_request');
        expect(upstream.seen.filter((r) => r.headers['x-run'] === run).length).toBe(0);
      }
    });

    test('a bad credential gets the 401 of the proxy listener; a good one passes', async ({
      nginx,
      caddy,
      upstream,
    }) => {
      const proxy = name === 'nginx' ? nginx : caddy;
      const run = randomUUID();
      const bad = await through(proxy, '/api/items', { 'x-run': run, authorization: 'Bearer 7|wrong' });
      expect(bad.status).toBe(401);
      expect(bad.text).toBe(INVALID_TOKEN_BODY);
      expect(bad.headers['content-type']).toBe('application/json');
      expect(bad.headers['x-ratelimit-remaining']).toBe('4');
      const good = await through(proxy, '/api/items', { 'x-run': run, authorization: GOOD_TOKEN });
      expect(good.status).toBe(200);
      expect(good.headers['x-ratelimit-limit']).toBe('5');
      expect(upstream.seen.filter((r) => r.headers['x-run'] === run).length).toBe(1);
    });
  });
}
