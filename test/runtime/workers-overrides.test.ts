// With workers, the primary's admin listener serves the overrides API: a PUT there is stored in
// Redis, and every worker applies it within its poll (each answers with the override's limit).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { expect } from 'vitest';
import { startGatewayProcess } from '../helpers/cli.js';
import { test } from '../helpers/fixtures.js';
import { gatewayYaml, REDIS_STORE, send } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';

const config = gatewayYaml(`
workers: 2
reload: { watch: false }
admin: { host: 127.0.0.1, port: 0, token: w0rkers }
${REDIS_STORE}
tiers: { overrides: { pollInterval: 200ms } }
upstreams: { app: { url: "\${UPSTREAM_URL}" } }
limiters:
  l: { windows: [{ limit: 40, period: 1m, key: [ip] }] }
routes: [{ name: r, paths: ["/*"], upstream: app, limiters: [l] }]
`);

test('a PUT on the primary reaches every worker', async ({ redis, upstream }) => {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-workers-ov-'));
  const file = join(dir, 'c.yaml');
  await writeFile(file, config);
  const gp = await startGatewayProcess(file, {
    env: { REDIS_URL: redis.url, UPSTREAM_URL: upstream.url },
    listeners: 2,
    admin: true,
  });
  const agent = new Agent({ pipelining: 0 });
  try {
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
  } finally {
    await agent.close();
    await gp.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
