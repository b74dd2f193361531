import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { startGatewayProcess, type CliProcess } from './cli.js';
import { test } from './fixtures.js';

/**
 * `test` with a real `tollgate start` of `config` (see gatewayYaml; it says `workers: 2` and has an
 * admin listener), its ${REDIS_URL} and ${UPSTREAM_URL} the file's redis-server and upstream, each
 * test's own:
 * - `gp`: the process, once both workers and the primary's admin listener listen;
 * - `agent`: an undici Agent without pipelining, so a request sent with `connection: close` takes a
 *   new connection, which the kernel hands to either worker.
 * Both are stopped after the test, and the config's temporary directory removed.
 */
export function workersGatewayTest(config: string) {
  return test
    .extend('gp', async ({ redis, upstream }, { onCleanup }): Promise<CliProcess> => {
      const dir = await mkdtemp(join(tmpdir(), 'tollgate-workers-'));
      const removeDir = () => rm(dir, { recursive: true, force: true });
      let gp: CliProcess;
      try {
        const file = join(dir, 'c.yaml');
        await writeFile(file, config);
        gp = await startGatewayProcess(file, {
          env: { REDIS_URL: redis.url, UPSTREAM_URL: upstream.url },
          listeners: 2,
          admin: true,
        });
      } catch (err) {
        await removeDir();
        throw err;
      }
      onCleanup(async () => {
        await gp.stop();
        await removeDir();
      });
      return gp;
    })
    .extend('agent', ({}, { onCleanup }) => {
      const agent = new Agent({ pipelining: 0 });
      onCleanup(() => agent.close());
      return agent;
    });
}
