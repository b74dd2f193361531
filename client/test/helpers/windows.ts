import { expect } from 'vitest';
import { sha256Hex } from '../../../src/credentials/digest.js';
import { StaticTokenStore } from '../../../src/identity/token-verification.js';
import { DEFAULT_CONFIG, defaultEnv } from '../../../test/helpers/default-config.js';
import type { GatewayLauncher } from '../../../test/helpers/fixtures.js';
import { gatewayYaml, REDIS_STORE, send } from '../../../test/helpers/gateway.js';
import type { RedisServer } from '../../../test/helpers/redis-server.js';
import type { TestUpstream } from '../../../test/helpers/upstream.js';

/** Limiters of the client's gateway tests: 30 a minute and 30 an hour, per IP, in front of the echo upstream. */
export const WINDOWS = gatewayYaml(`
${REDIS_STORE}
upstreams: { app: { url: "\${UPSTREAM_URL}" } }
limiters:
  minute: { windows: [{ limit: 30, period: 1m, key: [ip] }] }
  hour: { windows: [{ limit: 30, period: 1h, key: [ip] }] }
routes:
  - { name: minute, paths: ["/minute/*"], upstream: app, limiters: [minute] }
  - { name: hour, paths: ["/hour/*"], upstream: app, limiters: [hour] }
`);

interface Servers {
  readonly redis: RedisServer;
  readonly upstream: TestUpstream;
  readonly gateways: GatewayLauncher;
}

/** A gateway on WINDOWS, on the file's Redis and echo upstream. */
export function startWindowsGateway({ redis, upstream, gateways }: Servers) {
  return gateways.start(WINDOWS, { REDIS_URL: redis.url, UPSTREAM_URL: upstream.url });
}

/** A gateway on the shipped config, on the file's Redis and echo upstream, with one workspace token (7|s3cret). */
export function startShippedGateway({ redis, upstream, gateways }: Servers) {
  return gateways.start(DEFAULT_CONFIG, defaultEnv(upstream.url, { REDIS_URL: redis.url }), {
    workspaceTokens: new StaticTokenStore([{ id: '7', sha256: sha256Hex('s3cret') }]),
  });
}

/** Spends the minute window of `path`: 30 requests, each answered 200. */
export async function spendMinuteWindow(baseUrl: string, path: string): Promise<void> {
  for (let i = 0; i < 30; i++) expect((await send(`${baseUrl}${path}`)).status).toBe(200);
}
