// With workers, the primary's admin listener serves the overrides and bans APIs: a PUT there is
// stored in Redis, and every worker applies it within its poll (each answers with the override's
// limit); a ban the workers made is listed there, and lifting it there lifts it for every worker.
import { expect } from 'vitest';
import { gatewayYaml, REDIS_STORE, send } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { workersGatewayTest } from '../helpers/workers-gateway.js';

const config = gatewayYaml(`
workers: 2
reload: { watch: false }
admin: { host: 127.0.0.1, port: 0, token: w0rkers }
${REDIS_STORE}
tiers: { overrides: { pollInterval: 200ms } }
upstreams: { app: { url: "\${UPSTREAM_URL}" } }
limiters:
  l: { windows: [{ limit: 40, period: 1m, key: [ip] }] }
  b: { ban: { after: 1, within: 1m, for: 1m }, windows: [{ limit: 1, period: 1m, key: [ip] }] }
routes:
  - { name: b, paths: ["/b"], upstream: app, limiters: [b] }
  - { name: r, paths: ["/*"], upstream: app, limiters: [l] }
`);

const test = workersGatewayTest(config);

test('a PUT on the primary reaches every worker; a ban is listed and lifted there', async ({ gp, agent }) => {
  const code = async () => {
    const reply = await send(`${gp.url}/b`, { dispatcher: agent, headers: { connection: 'close' } });
    return reply.status === 200 ? 'ok' : (reply.json() as { error: { code: string } }).error.code;
  };
  // The first refusal is the strike that bans: every worker then answers banned.
  expect(await code()).toBe('ok');
  expect(await code()).toBe('rate_limited');
  for (let i = 0; i < 4; i++) expect(await code()).toBe('banned');
  const listed = await send(`${gp.adminUrl}/v1/bans`);
  expect(listed.status).toBe(200);
  const { bans } = listed.json() as { bans: { limiter: string; key: string }[] };
  expect(bans.map((b) => b.limiter)).toEqual(['b']);
  const lifted = await send(`${gp.adminUrl}/v1/bans/b/${bans[0]!.key}`, {
    method: 'DELETE',
    headers: { authorization: 'Bearer w0rkers' },
  });
  expect(lifted.status).toBe(200);
  // Lifted for every worker: the window is still spent, so the next answer is the window's own
  // 429 (a strike again, and with after: 1 the ban is back for the requests after it).
  expect(await code()).toBe('rate_limited');
  expect(await code()).toBe('banned');

  const put = await send(`${gp.adminUrl}/v1/overrides/ip:127.0.0.1`, {
    method: 'PUT',
    headers: { authorization: 'Bearer w0rkers' },
    body: '{"limit":1000}',
  });
  expect(put.status).toBe(200);
  // New connections spread over both workers: wait until ten in a row report the override.
  const limits = () =>
    Promise.all(
      Array.from(
        { length: 10 },
        async () =>
          (await send(`${gp.url}/x`, { dispatcher: agent, headers: { connection: 'close' } })).headers[
            'x-ratelimit-limit'
          ],
      ),
    );
  await waitFor(limits, (ls) => ls.every((l) => l === '1000'), { what: 'every worker to apply the PUT' });
});
