// Slow clients cost their own budget: a body is read whole before an upstream connection is taken,
// and one address may hold only so many requests in flight. Written as the attack of the issue:
// many uploads from one address that never finish their body.
import { request } from 'undici';
import { describe, expect } from 'vitest';
import { burst } from '../helpers/burst.js';
import { DEFAULT_CONFIG } from '../helpers/default-config.js';
import { dataDirWithWorkspaces, embeddedEnv } from '../helpers/embedded.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';
import { freePort } from '../helpers/ports.js';
import { sampleValue, scrape } from '../helpers/prometheus.js';
import { RawClient } from '../helpers/raw-client.js';
import { waitFor } from '../helpers/wait.js';

const ATTACKER = '203.0.113.66';
/** The in-flight cap of the shipped config's gateway (`shipped`). */
const CAP = 8;
/** The one address of the tests of `capped`. */
const IP = '192.0.2.9';

/**
 * Three gateways, each started when a test first names it:
 * - `pooled`: bodies read at the gateway before a pool of 2 upstream connections;
 * - `shipped`: the shipped config, at most CAP requests in flight per address; `init` calls its widget init;
 * - `capped`: one request in flight per address, a 1 KiB body bound, a 300 ms body deadline, and an
 *   upstream that is down; `openFrom` opens a POST from IP, `nextIsAdmitted` checks IP's slot came back.
 */
const test = serversTest
  .extend('pooled', { scope: 'file' }, ({ upstream, gateways }) =>
    gateways.start(
      gatewayYaml(`
identity: { trustedProxies: ['127.0.0.1'] }
requests: { bodyTimeout: 60s, maxInFlightPerIp: 1000 }
upstreams: { app: { url: '\${UPSTREAM_URL}', connections: 2 } }
routes: [{ name: all, paths: ['/*'], upstream: app }]
`),
      { UPSTREAM_URL: upstream.url },
    ),
  )
  .extend('shipped', { scope: 'file' }, ({ redis, gateways }) =>
    gateways.start(
      DEFAULT_CONFIG,
      embeddedEnv(dataDirWithWorkspaces('acme'), {
        REDIS_URL: redis.url,
        TRUSTED_PROXIES: '127.0.0.1',
        MAX_IN_FLIGHT_PER_IP: String(CAP),
        BODY_TIMEOUT: '60s',
      }),
    ),
  )
  .extend(
    'init',
    { scope: 'file' },
    ({ shipped }) =>
      (ip: string) =>
        send(`${shipped.url()}/api/v1/widget/init`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
          body: JSON.stringify({ workspace: 'acme' }),
        }),
  )
  .extend('capped', { scope: 'file' }, async ({ upstream, gateways }) =>
    gateways.start(
      gatewayYaml(`
identity: { trustedProxies: ['127.0.0.1'] }
requests: { maxBodySize: 1kb, bodyTimeout: 300ms, maxInFlightPerIp: 1 }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
  down: { url: '\${DOWN_URL}', connectTimeout: 1s }
routes:
  - { name: down, paths: [/down], upstream: down }
  - { name: all, paths: ['/*'], upstream: app }
`),
      { UPSTREAM_URL: upstream.url, DOWN_URL: `http://127.0.0.1:${await freePort()}` },
    ),
  )
  .extend(
    'openFrom',
    { scope: 'file' },
    ({ capped }) =>
      async (path: string, headers: Record<string, string | number>): Promise<RawClient> => {
        const client = await RawClient.open(capped.url());
        client.head('POST', path, { 'x-forwarded-for': IP, ...headers });
        return client;
      },
  )
  /** With a cap of 1, the next request from the address is admitted only if the last slot came back. */
  .extend('nextIsAdmitted', { scope: 'file' }, ({ capped }) => async (): Promise<void> => {
    await waitFor(
      () => capped.admission.held,
      (n) => n === 0,
      { what: 'the slot to be released' },
    );
    const reply = await send(`${capped.url()}/after`, { headers: { 'x-forwarded-for': IP } });
    expect(reply.status).toBe(200);
  });

/** Opens `n` uploads from `ip` that declare `length` bytes and send one. */
async function slowUploads(url: string, path: string, n: number, ip: string, length = 100) {
  return burst(n, async () => {
    const client = await RawClient.open(url);
    client.head('POST', path, {
      'content-type': 'application/json',
      'content-length': length,
      'x-forwarded-for': ip,
      'user-agent': 'slowloris',
    });
    client.write('{');
    return client;
  });
}

const inFlightRefusal = (max: number) =>
  JSON.stringify({
    error: {
      code: 'too_many_requests_in_flight',
      message: `More than ${max} requests from this address are in progress. Retry when one has finished.`,
    },
  });

describe('bodies are read at the gateway: slow uploads hold no upstream connection', () => {
  test('20 unfinished uploads on a pool of 2 connections: another client still gets through, 10 at once', async ({
    pooled,
    upstream,
  }) => {
    const uploads = await slowUploads(pooled.url(), '/upload', 20, ATTACKER);
    try {
      await waitFor(
        () => pooled.admission.requestsPerIp.held(ATTACKER),
        (n) => n === 20,
        { what: 'the 20 uploads to be admitted' },
      );
      const replies = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          send(`${pooled.url()}/other/${i}`, {
            method: 'POST',
            headers: { 'x-forwarded-for': '198.51.100.1' },
            body: `body ${i}`,
          }),
        ),
      );
      for (const [i, reply] of replies.entries()) {
        expect(reply.status).toBe(200);
        expect((reply.json() as { body: string }).body).toBe(`body ${i}`);
      }
      // Still held, and the upstream has not seen one of them.
      expect(pooled.admission.requestsPerIp.held(ATTACKER)).toBe(20);
      expect(upstream.seen.filter((s) => s.url === '/upload')).toEqual([]);

      // One finishes its body: it is forwarded whole.
      uploads[0]!.write(`"a":"${'y'.repeat(92)}"}`);
      const done = await uploads[0]!.response();
      expect(done.status).toBe(200);
      expect((done.json() as { body: string }).body).toBe(`{"a":"${'y'.repeat(92)}"}`);
    } finally {
      for (const u of uploads) u.destroy();
    }
    await waitFor(
      () => pooled.admission.held,
      (n) => n === 0,
      { what: 'every slot to be released' },
    );
  });
});

describe('the issue: 150 slow uploads from one address against the shipped config', () => {
  test('8 are held, 142 are refused with 429 at once, and other visitors init as usual', async ({
    shipped,
    init,
  }) => {
    const uploads = await slowUploads(shipped.url(), '/api/v1/widget/init', 150, ATTACKER);
    try {
      await waitFor(
        () => uploads.filter((u) => u.responded).length,
        (n) => n === 150 - CAP,
        { what: 'the uploads past the cap to be refused' },
      );
      expect(shipped.admission.requestsPerIp.held(ATTACKER)).toBe(CAP);
      for (const upload of uploads.filter((u) => u.responded)) {
        const reply = await upload.response();
        expect(reply.status).toBe(429);
        expect(reply.headers['content-type']).toBe('application/json');
        expect(reply.body).toBe(inFlightRefusal(CAP));
        expect(reply.headers['retry-after']).toBe('1');
        expect(reply.headers['connection']).toBe('close');
        // A cap's 429 carries no window headers: its window still has room, which would contradict it.
        expect(reply.headers['x-ratelimit-limit']).toBeUndefined();
        expect(reply.headers['x-ratelimit-remaining']).toBeUndefined();
        await upload.closed;
      }
      // Each attempt was counted against the attacker's own widget-init budget, and under its refusal.
      const metrics = await scrape(shipped.adminUrl!);
      const initRefused = 'tollgate_requests_total{limiter="widget-init",decision="too_many_in_flight"}';
      expect(sampleValue(metrics, initRefused)).toBe(150 - CAP);

      for (let i = 1; i <= 5; i++) {
        const reply = await init(`198.51.100.${i}`);
        expect(reply.status).toBe(200);
        expect(reply.json()).toMatchObject({ token_type: 'Bearer', workspace: { name: 'acme' } });
        expect(reply.headers['x-ratelimit-remaining']).toBe('999');
      }
      // The attacker's uploads are still open, still unanswered.
      expect(shipped.admission.requestsPerIp.held(ATTACKER)).toBe(CAP);
      expect(uploads.filter((u) => !u.responded && !u.socket.destroyed)).toHaveLength(CAP);
      const refused = await init(ATTACKER);
      expect(refused.status).toBe(429);
      expect(refused.text).toBe(inFlightRefusal(CAP));
    } finally {
      for (const u of uploads) u.destroy();
    }
    // The attacker leaving gives every slot back: the address may send again.
    await waitFor(
      () => shipped.admission.held,
      (n) => n === 0,
      { what: 'every slot to be released' },
    );
    expect((await init(ATTACKER)).status).toBe(200);
  });
});

describe('a slot is given back however the request ends', () => {
  test('the client leaves halfway through its body', async ({ capped, openFrom, nextIsAdmitted }) => {
    const client = await openFrom('/upload', { 'content-length': 500 });
    client.write('x'.repeat(100));
    await waitFor(
      () => capped.admission.requestsPerIp.held(IP),
      (n) => n === 1,
      { what: 'the upload to be admitted' },
    );
    const second = await send(`${capped.url()}/second`, { headers: { 'x-forwarded-for': IP } });
    expect(second.status).toBe(429);
    client.destroy();
    await nextIsAdmitted();
  });

  test('413 of a chunked body, and 408 of a late one', async ({ openFrom, nextIsAdmitted }) => {
    const large = await openFrom('/upload', { 'transfer-encoding': 'chunked' });
    large.chunk('x'.repeat(2000));
    expect((await large.response()).status).toBe(413);
    await nextIsAdmitted();

    const late = await openFrom('/upload', { 'content-length': 10 });
    late.write('x');
    expect((await late.response()).status).toBe(408);
    await nextIsAdmitted();
  });

  test('the client leaves while the upstream has not answered', async ({
    capped,
    upstream,
    nextIsAdmitted,
  }) => {
    const hung = upstream.hung;
    const leave = new AbortController();
    const aborted = request(`${capped.url()}/hang`, {
      headers: { 'x-forwarded-for': IP },
      signal: leave.signal,
    });
    await waitFor(
      () => upstream.hung,
      (n) => n === hung + 1,
      { what: 'the upstream to hold the request' },
    );
    expect(capped.admission.requestsPerIp.held(IP)).toBe(1);
    leave.abort();
    await expect(aborted).rejects.toThrow();
    await nextIsAdmitted();
  });

  test('the upstream is unreachable (502)', async ({ capped, nextIsAdmitted }) => {
    const reply = await send(`${capped.url()}/down`, {
      method: 'POST',
      headers: { 'x-forwarded-for': IP },
      body: 'x',
    });
    expect(reply.status).toBe(502);
    await nextIsAdmitted();
  });
});
