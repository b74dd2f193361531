import { once } from 'node:events';
import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import express from 'express';
import fastify, { type FastifyInstance } from 'fastify';
import fc from 'fast-check';
import { describe, expect, test as base } from 'vitest';
import { loadConfigText } from '../../src/rules/load.js';
import type { RuleTable } from '../../src/rules/compile.js';
import { canonicalTarget } from '../../src/routing/request-target.js';
import { DEFAULT_CONFIG, defaultEnv } from '../helpers/default-config.js';

/**
 * Every limited handler of the service the default config fronts, with the limiter that must count
 * it: what the embedded widget and bulk-sync services register.
 */
const HANDLERS: readonly { method: string; path: string; limiters: string[] }[] = [
  { method: 'POST', path: '/api/v1/widget/init', limiters: ['widget-init', 'widget-sessions-ip'] },
  ...['/api/v1/widget/messages', '/api/v1/widget/events'].map((path) => ({
    method: 'POST',
    path,
    limiters: ['widget-session', 'widget-stored-ip'],
  })),
  ...[
    '/api/v1/widget/messages/stream',
    '/api/v1/widget/conversation/messages',
    '/api/v1/widget/conversation/clear',
    '/api/v1/widget/request-human',
  ].map((path) => ({ method: 'POST', path, limiters: ['widget-session'] })),
  { method: 'GET', path: '/api/v1/widget/conversation/messages', limiters: ['widget-session'] },
  { method: 'DELETE', path: '/api/v1/widget/me', limiters: ['widget-session'] },
  { method: 'POST', path: '/api/v1/widget/leads', limiters: ['widget-leads', 'widget-stored-ip'] },
  { method: 'POST', path: '/api/v1/widget/typing', limiters: ['widget-typing'] },
  { method: 'POST', path: '/api/v1/widget/satisfaction', limiters: ['widget-satisfaction'] },
  { method: 'POST', path: '/api/v1/widget/coupon/apply', limiters: ['widget-coupon-apply'] },
  ...['/v1/wp', '/api/v1/wp'].flatMap((prefix) =>
    ['handshake', 'posts/sync', 'products/changed', 'coupons/sync'].map((p) => ({
      method: 'POST',
      path: `${prefix}/${p}`,
      limiters: ['wp-plugin'],
    })),
  ),
];

/** Answers every request with the handler it was routed to ("none" for a 404). */
async function startFastify(): Promise<FastifyInstance> {
  const app = fastify();
  HANDLERS.forEach((h, i) =>
    app.route({ method: h.method as 'GET', url: h.path, handler: async () => String(i) }),
  );
  app.setNotFoundHandler(async (_req, reply) => reply.code(404).send('none'));
  await app.listen({ host: '127.0.0.1', port: 0 });
  return app;
}

/** Express routes case-insensitively and ignores a trailing slash: a more lenient router. */
async function startExpress(): Promise<Server> {
  const app = express();
  HANDLERS.forEach((h, i) =>
    app[h.method.toLowerCase() as 'get' | 'post' | 'delete'](h.path, (_req, res) => res.send(String(i))),
  );
  app.use((_req, res) => res.status(404).send('none'));
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

/** The handler an upstream routes a raw request target to, sent byte for byte over a socket. */
async function routedTo(port: number, method: string, target: string): Promise<number | undefined> {
  const socket = connect(port, '127.0.0.1');
  socket.write(
    `${method} ${target} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
  );
  let raw = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (raw += chunk));
  await once(socket, 'close');
  const status = /^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1];
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  // Node refuses some targets (400) before any router sees them.
  return status === '200' ? Number(body) : undefined;
}

/** The first value most of the time (so most targets stay routable), any of the others otherwise. */
const often = <T>(usual: T, ...rare: T[]): fc.Arbitrary<T> =>
  fc.oneof(
    { arbitrary: fc.constant(usual), weight: 4 * rare.length },
    ...rare.map((r) => ({ arbitrary: fc.constant(r), weight: 1 })),
  );

/**
 * The most lenient router we model (as nginx, Spring or a hand-written one may be): WHATWG URL
 * parsing ("\\" is "/", dot segments resolved), every escape decoded, "//" collapsed, ";params"
 * dropped, case ignored, a trailing "/" ignored.
 */
function lenientRoute(method: string, target: string): number | undefined {
  let path: string;
  try {
    path = decodeURIComponent(new URL(target, 'http://upstream').pathname);
  } catch {
    return undefined;
  }
  const key = path
    .replace(/;[^/]*/g, '')
    .replace(/\/{2,}/g, '/')
    .replace(/(.)\/$/, '$1')
    .toLowerCase();
  const i = HANDLERS.findIndex((h) => h.method === method && h.path === key);
  return i === -1 ? undefined : i;
}

/** A target for one handler, spelled in ways an attacker would try. */
const spelling = (path: string): fc.Arbitrary<string> => {
  const segments = path.split('/').slice(1);
  const segment = (s: string) =>
    fc
      .tuple(
        fc.array(often('none', 'case', 'escape', 'escapeLower'), {
          minLength: s.length,
          maxLength: s.length,
        }),
        often('', ';p=1', ';'),
      )
      .map(([ops, param]) =>
        [...s]
          .map((ch, i) => {
            const code = ch.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0');
            if (ops[i] === 'case') return ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase();
            if (ops[i] === 'escape') return `%${code}`;
            if (ops[i] === 'escapeLower') return `%${code.toLowerCase()}`;
            return ch;
          })
          .join('')
          .concat(param),
      );
  const separator = often('/', '//', '/./', '/x/../', '/%2e/', '/%2E%2E/y/../', '%2F', '%2f', '\\', '/%5C');
  return fc
    .tuple(
      fc.tuple(...segments.map(segment)),
      fc.array(separator, { minLength: segments.length, maxLength: segments.length }),
      often('', '/', '/.', '/..'),
      often('', '#x', '?a=1', '?a=/../leads', '#/../init', '?q#f'),
    )
    .map(
      ([segs, seps, tail, suffix]) =>
        segs.map((s, i) => `${i === 0 ? '/' : seps[i]}${s}`).join('') + tail + suffix,
    );
};

const limitersOf = (table: RuleTable, method: string, matchPath: string): string[] =>
  table.router.matchPath('localhost', method, matchPath)?.limiters.map((l) => l.name) ?? [];

/** `table`: the shipped config's rule table; `upstreams`: a fastify and an express app, and their ports. */
const test = base
  .extend('table', { scope: 'file' }, (): RuleTable =>
    loadConfigText(DEFAULT_CONFIG, 'config/gateway.yaml', defaultEnv('http://127.0.0.1:9')),
  )
  .extend('upstreams', { scope: 'file' }, async ({}, { onCleanup }) => {
    const [fastifyApp, expressServer] = await Promise.all([startFastify(), startExpress()]);
    onCleanup(async () => {
      expressServer.close();
      await fastifyApp.close();
    });
    return [
      { name: 'fastify', port: (fastifyApp.server.address() as AddressInfo).port },
      { name: 'express', port: (expressServer.address() as AddressInfo).port },
    ];
  });

describe('canonical paths: what an upstream routes to a limited handler is counted under its limiter', () => {
  test('every handler is counted under its limiter, spelled plainly or as the issue found it', async ({
    table,
    upstreams,
  }) => {
    for (const h of HANDLERS) {
      for (const raw of [h.path, `${h.path}#x`, `${h.path}/`, h.path.toUpperCase(), `${h.path};x`]) {
        const target = canonicalTarget(raw);
        expect(target.ok, raw).toBe(true);
        expect(limitersOf(table, h.method, target.matchPath), raw).toEqual(h.limiters);
      }
      for (const u of upstreams) expect(await routedTo(u.port, h.method, h.path)).toBe(HANDLERS.indexOf(h));
      // The fragment never reaches the upstream, which would have routed it to the handler.
      expect(canonicalTarget(`${h.path}#x`)).toMatchObject({ target: h.path });
    }
  });

  test('generated spellings: the forwarded target, and the raw one, never reach a handler uncounted', async ({
    table,
    upstreams,
  }) => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...HANDLERS).chain((h) => fc.tuple(fc.constant(h), spelling(h.path))),
        async ([h, raw]) => {
          const target = canonicalTarget(raw);
          const counted = limitersOf(table, h.method, target.matchPath);
          const lenient = [target.ok && lenientRoute(h.method, target.target), lenientRoute(h.method, raw)];
          for (const handler of lenient) {
            if (typeof handler === 'number')
              expect(counted, `lenient ${raw}`).toEqual(expect.arrayContaining(HANDLERS[handler]!.limiters));
          }
          for (const u of upstreams) {
            // What the upstream does with the target the gateway forwards (refused targets are not forwarded).
            if (target.ok) {
              const handler = await routedTo(u.port, h.method, target.target);
              if (handler !== undefined)
                expect(counted, `${u.name} ${raw} -> ${target.target}`).toEqual(
                  expect.arrayContaining(HANDLERS[handler]!.limiters),
                );
            }
            // Had the raw target been forwarded as sent, it would still have been counted.
            const rawHandler = await routedTo(u.port, h.method, raw);
            if (rawHandler !== undefined)
              expect(counted, `${u.name} raw ${raw}`).toEqual(
                expect.arrayContaining(HANDLERS[rawHandler]!.limiters),
              );
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});
