// `tollgate explain`'s answer: the refusal the request path's own functions give, in their order,
// else "forwarded as" and the refusals that depend on live state.
import ipaddr from 'ipaddr.js';
import { describe, expect, test } from 'vitest';
import { describeRequest, describeRuleTable } from '../../src/cli/describe.js';
import { explainAnswer } from '../../src/cli/explain-answer.js';
import type { RequestIdentity } from '../../src/identity/resolve.js';
import { canonicalTarget } from '../../src/routing/request-target.js';
import { loadConfigText } from '../../src/rules/load.js';

const CONFIG = `
listeners: [{ host: 127.0.0.1, port: 0 }]
identity:
  jwt: { secret: 'a-secret-of-at-least-thirty-two-bytes!', algorithms: [HS256], issuer: tollgate, audience: tollgate-widget }
requests: { maxInFlightPerIp: 8, maxBodySize: 1kb }
streams: { maxPerSession: 2, maxPerIp: 5 }
upstreams:
  app: { url: 'http://127.0.0.1:9' }
  events: { url: 'http://127.0.0.1:9', streamConnections: 40 }
limiters:
  visitor: { windows: [{ limit: 10, period: 1m, key: [jwt] }] }
  guarded:
    deny: { addresses: ['10.6.0.0/16'] }
    ban: { after: 3, within: 10m, for: 1h }
    windows: [{ limit: 10, period: 1m, key: [ip] }]
  watching: { shadow: true, deny: { addresses: ['10.7.0.0/16'] }, windows: [{ limit: 10, period: 1m, key: [ip] }] }
  bytes: { cost: { from: content-length, per: 100 }, windows: [{ limit: 100, period: 1m, key: [ip] }] }
routes:
  - { name: visitor, paths: ['/v/*'], upstream: app, limiters: [visitor] }
  - { name: guarded, paths: ['/g/*'], upstream: app, limiters: [guarded] }
  - { name: watched, paths: ['/w/*'], upstream: app, limiters: [watching] }
  - { name: priced, paths: ['/p/*'], upstream: app, limiters: [bytes] }
  - { name: stream, paths: ['/s'], upstream: events, stream: true, limiters: [visitor] }
  - { name: free, paths: ['/*'], upstream: app }
`;
const table = loadConfigText(CONFIG, 'gateway.yaml', {});

/** A stand-in identity: what credentialRefusal reads (a JWT that failed, or none). */
const identity = (jwt?: 'missing' | 'invalid' | 'ok') =>
  ({
    clientIp: '192.0.2.1',
    hashed: new Map(),
    jwt: jwt === undefined ? undefined : jwt === 'ok' ? { ok: true } : { ok: false, reason: jwt },
  }) as unknown as RequestIdentity;

function answer(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  options: { jwt?: 'missing' | 'invalid' | 'ok'; address?: string } = {},
): string[] {
  const target = canonicalTarget(path);
  const route = table.router.matchPath(undefined, method, target.matchPath)!;
  const limited = route.limiters.length > 0;
  return explainAnswer({
    route,
    method,
    target,
    headers,
    identity: limited ? identity(options.jwt) : undefined,
    subject: limited
      ? { address: ipaddr.parse(options.address ?? '192.0.2.1'), token: undefined }
      : undefined,
    windows: route.windows,
    config: table.config,
  });
}

const IN_FLIGHT =
  'may be refused: 429 too_many_requests_in_flight when this address has 8 requests in progress (live state, per process)';
const WINDOW =
  'may be refused: 429 rate_limited when a window below is spent (live state: the counts in the store)';

describe('explain: the refusal certain from the request alone', () => {
  test('a missing or invalid visitor token: the 401 with its code, after counting', () => {
    expect(answer('POST', '/v/messages', {}, { jwt: 'missing' })).toEqual([
      'refused: 401 missing_token (Visitor token missing.), after counting',
    ]);
    expect(answer('POST', '/v/messages', {}, { jwt: 'invalid' })).toEqual([
      'refused: 401 invalid_token (Visitor token is invalid.), after counting',
    ]);
  });

  test('a Connection header naming a header the request is keyed by: 400', () => {
    expect(answer('GET', '/v/x', { connection: 'close, Authorization' }, { jwt: 'ok' })).toEqual([
      'refused: 400 invalid_connection_header (The Connection header may not name authorization: the gateway identifies requests by it.), after counting',
    ]);
  });

  test("a declared body over the route's bound: 413; within it, forwarded", () => {
    expect(answer('POST', '/anything', { 'content-length': '1025' })).toEqual([
      'refused: 413 payload_too_large (The request body exceeds 1024 bytes.)',
    ]);
    expect(answer('POST', '/anything', { 'content-length': '1024' })).toEqual([
      'forwarded as: /anything',
      IN_FLIGHT,
    ]);
  });

  test("an enforcing limiter's deny list: 403 before anything is counted; a shadow one's refuses nothing", () => {
    expect(answer('GET', '/g/x', {}, { address: '10.6.1.2' })).toEqual([
      "refused: 403 denied (Requests from this client are refused here.), by guarded's deny list, nothing counted",
    ]);
    expect(answer('GET', '/w/x', {}, { address: '10.7.1.2' })).toEqual(['forwarded as: /w/x', IN_FLIGHT]);
  });

  test('a body-priced route without a Content-Length: 411, nothing counted', () => {
    expect(answer('POST', '/p/x', { 'transfer-encoding': 'chunked' })).toEqual([
      "refused: 411 length_required (This route's rate limit is priced by the body's size: send a Content-Length.), nothing counted",
    ]);
  });

  test('a target the gateway cannot forward: its 400', () => {
    expect(answer('GET', '/g/a%2Fb')).toEqual([
      'refused: 400 invalid_request_target (Invalid request target: the path has an encoded "/" or "\\".), after counting',
    ]);
  });
});

describe('explain: what depends on live state', () => {
  test('a window, a ban and the in-flight cap may refuse a request that passes', () => {
    expect(answer('GET', '/g/x')).toEqual([
      'forwarded as: /g/x',
      WINDOW,
      'may be refused: 429 banned while guarded holds this key banned (live state: the bans in the store)',
      IN_FLIGHT,
    ]);
  });

  test('an event stream: the stream caps instead of the in-flight one', () => {
    expect(answer('GET', '/s', {}, { jwt: 'ok' })).toEqual([
      'forwarded as: /s',
      WINDOW,
      'may be refused: 429 too_many_streams when this visitor session holds 2 event streams (live state)',
      'may be refused: 429 too_many_streams when this address holds 5 event streams (live state)',
      'may be refused: 503 stream_capacity_reached when upstream events holds 40 streams (live state)',
    ]);
  });
});

describe('log.clientAddress in check and explain', () => {
  test('shown when not the address in full', () => {
    const withMode = (mode: string) =>
      loadConfigText(`${CONFIG}\nlog: { clientAddress: ${mode} }\n`, 'gateway.yaml', {});
    expect(describeRuleTable(withMode('hashed'))).toContain(
      'access log: client address hashed (log.clientAddress)',
    );
    expect(describeRequest(withMode('none'), 'free', undefined, 'tg:')).toContain(
      'access log: no client address (log.clientAddress)',
    );
    expect(describeRuleTable(table)).not.toContain('log.clientAddress');
  });
});
