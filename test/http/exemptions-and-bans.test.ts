// Allow and deny lists and bans through real gateways on a real redis-server: an allowed address
// passes beyond the limit (counted exempt), a denied one gets 403 and never reaches the upstream,
// a key refused `after` times is banned (429 banned, Retry-After at the ban's end) on every gateway
// of the store, until the admin API lifts the ban or it expires.
import { describe, expect } from 'vitest';
import { hashPart } from '../../src/identity/hash.js';
import { loadConfigText } from '../../src/rules/load.js';
import { test } from '../helpers/fixtures.js';
import { gatewayYaml, send, type Reply } from '../helpers/gateway.js';
import { sampleValue, scrape } from '../helpers/prometheus.js';
import { untilClockPast } from '../helpers/wait.js';

const TOKEN = 'admin-secret';

const CONFIG = gatewayYaml(
  `
admin: { host: 127.0.0.1, port: 0, token: ${TOKEN} }
identity: { trustedProxies: ['127.0.0.1/32'] }
store: { redis: { url: '\${REDIS_URL}', commandTimeout: 2s } }
upstreams: { app: { url: '\${UPSTREAM_URL}' } }
limiters:
  api:
    windows: [{ limit: 1, period: 1h, key: [ip, 'header:X-Attempt'] }]
    allow: { addresses: ['10.1.0.0/16'] }
    deny: { addresses: ['10.66.0.0/16', '10.1.66.6'] }
    ban: { after: 2, within: 1h, for: 1h }
  quick:
    windows: [{ limit: 1, period: 1h, key: [ip] }]
    ban: { after: 1, within: 1h, for: 3s }
routes:
  - { name: api, paths: ['/api/*'], upstream: app, limiters: [api] }
  - { name: quick, paths: ['/quick/*'], upstream: app, limiters: [quick] }
`,
  { listeners: [{ name: 'public' }, { name: 'decision', mode: 'decision' }] },
);

const BANNED =
  '{"error":{"code":"banned","message":"Too many requests were refused: this client is banned for a while."}}';
const LIMITED = '{"error":{"code":"rate_limited","message":"Too Many Attempts."}}';

const from = (url: string, ip: string) => send(url, { headers: { 'x-forwarded-for': ip } });
const refusal = (r: Reply) => ({ status: r.status, body: r.text, retryAfter: r.headers['retry-after'] });

const files = test.extend('pair', { scope: 'file' }, async ({ gateways, gatewayEnv }) => {
  const one = await gateways.start(CONFIG, gatewayEnv);
  const two = await gateways.start(CONFIG, gatewayEnv);
  return { one, two };
});

describe('allow and deny lists', () => {
  files(
    'an allowed address passes beyond the limit, without headers, counted exempt',
    async ({ pair, upstream }) => {
      const before = upstream.seen.length;
      for (let i = 0; i < 4; i++) {
        const r = await from(`${pair.one.url()}/api/x`, '10.1.2.3');
        expect(r.status).toBe(200);
        expect(r.headers['x-ratelimit-limit']).toBeUndefined();
      }
      expect(upstream.seen.length).toBe(before + 4);
      const metrics = await scrape(pair.one.adminUrl!);
      expect(sampleValue(metrics, 'tollgate_requests_total{limiter="api",decision="exempt"}')).toBe(4);
    },
  );

  files(
    'a denied address gets 403 denied and never reaches the upstream; deny wins over allow',
    async ({ pair, upstream }) => {
      const before = upstream.seen.length;
      for (const ip of ['10.66.0.9', '10.1.66.6']) {
        const r = await from(`${pair.one.url()}/api/x`, ip);
        expect(r.status).toBe(403);
        expect(r.headers['content-type']).toBe('application/json');
        expect(r.text).toBe(
          '{"error":{"code":"denied","message":"Requests from this client are refused here."}}',
        );
        expect(r.headers['retry-after']).toBeUndefined();
      }
      expect(upstream.seen.length).toBe(before);
      const metrics = await scrape(pair.one.adminUrl!);
      expect(sampleValue(metrics, 'tollgate_requests_total{limiter="api",decision="denied"}')).toBe(2);
    },
  );
});

describe('bans', () => {
  files(
    'after 2 refusals the key is banned on both gateways, until the admin API lifts it',
    async ({ pair, redisClient, upstream }) => {
      const ip = '10.9.9.9';
      // The ban is keyed by the limiter's hash-tag part (ip); the window by ip and X-Attempt.
      const api = (g: typeof pair.one, attempt = 'a') =>
        send(`${g.url()}/api/x`, { headers: { 'x-forwarded-for': ip, 'x-attempt': attempt } });
      expect((await api(pair.one)).status).toBe(200);
      // Two refusals by the window: the second bans. Both are the window's own 429.
      const first = await api(pair.one);
      expect({ status: first.status, body: first.text }).toEqual({ status: 429, body: LIMITED });
      const second = await api(pair.two);
      expect({ status: second.status, body: second.text }).toEqual({ status: 429, body: LIMITED });

      const banKey = `tg:{${hashPart(`ip=${ip}`)}}:api:ban`;
      const seen = upstream.seen.length;
      for (const g of [pair.one, pair.two]) {
        const ttlBefore = await redisClient.pttl(banKey);
        const r = await api(g);
        const ttlAfter = await redisClient.pttl(banKey);
        expect({ status: r.status, body: r.text }).toEqual({ status: 429, body: BANNED });
        // Retry-After is the ban's end: between what Redis said just before and just after.
        const retryAfter = Number(r.headers['retry-after']);
        expect(retryAfter).toBeGreaterThanOrEqual(Math.ceil(ttlAfter / 1000));
        expect(retryAfter).toBeLessThanOrEqual(Math.ceil(ttlBefore / 1000));
        expect(ttlBefore).toBeGreaterThan(3_500_000);
        expect(r.headers['x-ratelimit-limit']).toBeUndefined();
      }
      expect(upstream.seen.length).toBe(seen);

      // Listed on either gateway's admin API (the store is shared).
      const listed = await send(`${pair.two.adminUrl}/v1/bans`);
      expect(listed.status).toBe(200);
      const body = listed.json() as {
        bans: { limiter: string; key: string; until: string; retryAfter: number }[];
        truncated: boolean;
      };
      expect(body.truncated).toBe(false);
      expect(body.bans.map((b) => ({ limiter: b.limiter, key: b.key }))).toEqual([
        { limiter: 'api', key: hashPart(`ip=${ip}`) },
      ]);
      expect(Date.parse(body.bans[0]!.until)).toBeGreaterThan(Date.now() + 3_500_000);

      // Banned, a fresh window (another X-Attempt) is refused too.
      expect((await api(pair.one, 'b')).text).toBe(BANNED);

      // Lifting needs the token.
      const path = `${pair.one.adminUrl}/v1/bans/api/${hashPart(`ip=${ip}`)}`;
      const anonymous = await send(path, { method: 'DELETE' });
      expect(anonymous.status).toBe(401);
      expect(anonymous.text).toBe(
        '{"error":{"code":"unauthorized","message":"Send \\"Authorization: Bearer <admin token>\\"."}}',
      );
      const wrong = await send(path, { method: 'DELETE', headers: { authorization: 'Bearer nope' } });
      expect(wrong.status).toBe(401);
      const auth = { authorization: `Bearer ${TOKEN}` };
      const lifted = await send(path, { method: 'DELETE', headers: auth });
      expect({ status: lifted.status, body: lifted.json() }).toEqual({
        status: 200,
        body: { lifted: { limiter: 'api', key: hashPart(`ip=${ip}`) } },
      });
      const again = await send(path, { method: 'DELETE', headers: auth });
      expect({ status: again.status, body: again.text }).toEqual({
        status: 404,
        body: `{"error":{"code":"ban_not_found","message":"No ban of \\"${hashPart(`ip=${ip}`)}\\" by limiter \\"api\\"."}}`,
      });
      expect((await send(`${pair.one.adminUrl}/v1/bans`)).json()).toEqual({ bans: [], truncated: false });

      // Lifted: the fresh window passes, on the other gateway too; the spent one is the window's 429.
      expect((await api(pair.two, 'b')).status).toBe(200);
      expect((await api(pair.two, 'a')).text).toBe(LIMITED);
    },
  );

  files("a ban expires by itself; the next refusal is the window's own", async ({ pair }) => {
    const quick = () => from(`${pair.one.url()}/quick/x`, '10.7.7.7');
    expect((await quick()).status).toBe(200);
    expect(refusal(await quick())).toMatchObject({ status: 429, body: LIMITED });
    const banned = await quick();
    expect({ status: banned.status, body: banned.text }).toEqual({ status: 429, body: BANNED });
    const retryAfter = Number(banned.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3);
    await untilClockPast(Date.now() + retryAfter * 1000);
    // The ban is over; the 1h window is still spent, so the window refuses (and bans again).
    expect(refusal(await quick())).toMatchObject({ status: 429, body: LIMITED });
    expect(refusal(await quick())).toMatchObject({ status: 429, body: BANNED });
  });

  files('bad admin requests', async ({ pair }) => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const unknown = await send(`${pair.one.adminUrl}/v1/bans/nope/abc`, { method: 'DELETE', headers: auth });
    expect({ status: unknown.status, body: unknown.text }).toEqual({
      status: 404,
      body: '{"error":{"code":"unknown_limiter","message":"No limiter \\"nope\\" with a ban."}}',
    });
    const bare = await send(`${pair.one.adminUrl}/v1/bans/abc`, { method: 'DELETE', headers: auth });
    expect(bare.status).toBe(400);
    const limit = await send(`${pair.one.adminUrl}/v1/bans?limit=0`);
    expect({ status: limit.status, body: limit.text }).toEqual({
      status: 400,
      body: '{"error":{"code":"invalid_limit","message":"limit must be a whole number from 1 to 1000."}}',
    });
  });
});

describe('the decision listener (forward-auth) answers lists and bans as the proxy does', () => {
  const decide = (g: { url(listener?: string): string }, ip: string, uri: string) =>
    send(g.url('decision'), {
      headers: { 'x-forwarded-for': ip, 'x-forwarded-method': 'GET', 'x-forwarded-uri': uri },
    });

  files('denied: 403; exempt: 200 beyond the limit; banned: 429 banned', async ({ pair }) => {
    const denied = await decide(pair.one, '10.66.3.3', '/api/x');
    expect({ status: denied.status, body: denied.text }).toEqual({
      status: 403,
      body: '{"error":{"code":"denied","message":"Requests from this client are refused here."}}',
    });
    for (let i = 0; i < 3; i++) expect((await decide(pair.one, '10.1.9.9', '/api/x')).status).toBe(200);
    expect((await decide(pair.one, '10.8.8.8', '/quick/x')).status).toBe(200);
    expect((await decide(pair.one, '10.8.8.8', '/quick/x')).text).toBe(LIMITED);
    const banned = await decide(pair.two, '10.8.8.8', '/quick/x');
    expect({ status: banned.status, body: banned.text }).toEqual({ status: 429, body: BANNED });
    expect(Number(banned.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});

describe('hot reload', () => {
  const memoryConfig = (extra: string) =>
    gatewayYaml(`
identity: { trustedProxies: ['127.0.0.1/32'] }
upstreams: { app: { url: '\${UPSTREAM_URL}' } }
limiters:
  l:
    windows: [{ limit: 1, period: 1h, key: [ip] }]
${extra}
routes:
  - { name: all, paths: ['/*'], upstream: app, limiters: [l] }
`);

  files(
    'a reload applies new lists and a new ban at once (the memory store)',
    async ({ gateways, gatewayEnv }) => {
      const g = await gateways.start(memoryConfig(''), gatewayEnv);
      const reload = (extra: string) =>
        g.reload(loadConfigText(memoryConfig(extra), 'reloaded.yaml', gatewayEnv));
      const get = () => from(`${g.url()}/x`, '10.5.5.5');
      expect((await get()).status).toBe(200);
      expect((await get()).text).toBe(LIMITED);
      await reload("    allow: { addresses: ['10.5.0.0/16'] }");
      expect((await get()).status).toBe(200);
      await reload("    deny: { addresses: ['10.5.5.5'] }");
      expect((await get()).status).toBe(403);
      await reload('    ban: { after: 1, within: 1h, for: 1h }');
      expect((await get()).text).toBe(LIMITED); // the strike that bans
      const banned = await get();
      expect({ status: banned.status, body: banned.text }).toEqual({ status: 429, body: BANNED });
      expect(Number(banned.headers['retry-after'])).toBeGreaterThan(3500);
    },
  );
});
