import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { asciiJson } from '../../src/http/decision-handler.js';
import { namesNoOriginal, originalRequest } from '../../src/http/original-request.js';
import { configErrorOf } from '../helpers/config-errors.js';
import { loadConfigText } from '../../src/rules/load.js';

describe('originalRequest', () => {
  test('Traefik and Caddy: X-Forwarded-Method, X-Forwarded-Uri, X-Forwarded-Host', () => {
    expect(
      originalRequest({
        host: 'tollgate:8081',
        'x-forwarded-method': 'POST',
        'x-forwarded-uri': '/api/items?page=2',
        'x-forwarded-host': 'app.example',
      }),
    ).toEqual({ ok: true, method: 'POST', uri: '/api/items?page=2', host: 'app.example' });
  });

  test('nginx: X-Original-Method and X-Original-URI, the host from Host without X-Forwarded-Host', () => {
    expect(
      originalRequest({ host: 'app.example', 'x-original-method': 'GET', 'x-original-uri': '/a' }),
    ).toEqual({ ok: true, method: 'GET', uri: '/a', host: 'app.example' });
    expect(originalRequest({ 'x-original-method': 'GET', 'x-original-uri': '/a' })).toEqual({
      ok: true,
      method: 'GET',
      uri: '/a',
      host: undefined,
    });
  });

  test('refuses a question naming the request in both families (a client could add the other)', () => {
    const reply = originalRequest({
      'x-original-method': 'GET',
      'x-original-uri': '/expensive',
      'x-forwarded-uri': '/cheap',
    });
    expect(reply.ok).toBe(false);
  });

  test('refuses a repeated method (Node joins it) and an empty X-Forwarded-Host', () => {
    expect(originalRequest({ 'x-forwarded-method': 'GET, POST', 'x-forwarded-uri': '/' }).ok).toBe(false);
    expect(
      originalRequest({ 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/', 'x-forwarded-host': '' }).ok,
    ).toBe(false);
  });

  test('namesNoOriginal: only when none of the four headers is there', () => {
    expect(namesNoOriginal({ host: 'x' })).toBe(true);
    expect(namesNoOriginal({ 'x-original-uri': '/' })).toBe(false);
    expect(namesNoOriginal({ 'x-forwarded-method': 'GET' })).toBe(false);
  });
});

test('asciiJson escapes only non-ASCII characters, to the same JSON value', () => {
  const json = JSON.stringify({ error: { code: 'rate_limited', message: 'Trop de requêtes — 🙂' } });
  const escaped = asciiJson(json);
  expect(escaped).toBe(
    '{"error":{"code":"rate_limited","message":"Trop de requ\\u00eates \\u2014 \\ud83d\\ude42"}}',
  );
  expect(JSON.parse(escaped)).toEqual(JSON.parse(json));
  expect(asciiJson('{"a":"plain"}')).toBe('{"a":"plain"}');
});

describe('listener mode', () => {
  const config = (listener: string) => `
listeners: [${listener}]
upstreams: { app: { url: "http://127.0.0.1:1" } }
routes: [{ name: r, paths: ["/*"], upstream: app }]
`;

  test('defaults to proxy, answering 429', () => {
    const [l] = loadConfigText(config('{ port: 0 }'), 'c', {}).config.listeners;
    expect([l!.mode, l!.onLimited]).toEqual(['proxy', 429]);
  });

  test('a decision listener may answer 403 when limited', () => {
    const [l] = loadConfigText(config('{ port: 0, mode: decision, onLimited: 403 }'), 'c', {}).config
      .listeners;
    expect([l!.mode, l!.onLimited]).toEqual(['decision', 403]);
  });

  test('onLimited on a proxy listener, or another status, is refused', () => {
    expect(configErrorOf(config('{ port: 0, onLimited: 403 }'))).toContain(
      'onLimited applies to decision listeners (mode: decision) only',
    );
    expect(configErrorOf(config('{ port: 0, mode: decision, onLimited: 500 }'))).toContain('onLimited');
  });
});

test('the shipped Traefik example asks the decision listener and copies its headers', () => {
  const doc = parse(readFileSync('docs/examples/traefik.yaml', 'utf8')) as {
    http: {
      middlewares: {
        tollgate: {
          forwardAuth: { address: string; trustForwardHeader: boolean; authResponseHeaders: string[] };
        };
      };
      routers: { app: { middlewares: string[] } };
    };
  };
  const { forwardAuth } = doc.http.middlewares.tollgate;
  expect(forwardAuth).toEqual({
    address: 'http://127.0.0.1:8081/',
    trustForwardHeader: false,
    authResponseHeaders: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
  });
  expect(doc.http.routers.app.middlewares).toEqual(['tollgate']);
});
