import { test as base } from 'vitest';
import type { Gateway, GatewayOptions } from '../../src/runtime/gateway.js';
import { sha256Hex } from '../../src/credentials/digest.js';
import { StaticTokenStore } from '../../src/identity/token-verification.js';
import { openDatabase } from '../../src/db/database.js';
import { DEFAULT_CONFIG, defaultEnv } from './default-config.js';
import { dataDirWithWorkspaces, embeddedEnv } from './embedded.js';
import { startGateway } from './gateway.js';
import { RedisServer } from './redis-server.js';
import { TestPages } from './test-pages.js';
import { TestUpstream } from './upstream.js';

/** Starts gateways for a test file, and closes every one of them after its last test. */
export class GatewayLauncher {
  readonly #running: Gateway[] = [];

  /** A gateway from YAML text (see gatewayYaml), its ${...} references resolved from `env`. */
  async start(yaml: string, env: Record<string, string> = {}, options: Partial<GatewayOptions> = {}) {
    const gateway = await startGateway(yaml, env, options);
    this.#running.push(gateway);
    return gateway;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.#running.splice(0).map((g) => g.close()));
  }
}

/**
 * `test` with the servers a gateway test file shares, each started when a test (or a file-level
 * hook) first names it, and stopped after the file's last test:
 * - `redis`: a redis-server of the file's own, on a free port; `redisClient`: a client of it, to inspect keys;
 * - `upstream`: the echoing TestUpstream;
 * - `gatewayEnv`: REDIS_URL and UPSTREAM_URL of those two, for a config's ${...} references;
 * - `gateways`: starts gateways, and closes them after the file's last test.
 */
export const test = base
  .extend('redis', { scope: 'file' }, async ({}, { onCleanup }) => {
    const redis = await RedisServer.start();
    onCleanup(() => redis.kill());
    return redis;
  })
  .extend('redisClient', { scope: 'file' }, ({ redis }, { onCleanup }) => {
    const client = redis.client();
    onCleanup(() => client.disconnect());
    return client;
  })
  .extend('upstream', { scope: 'file' }, async ({}, { onCleanup }) => {
    const upstream = await TestUpstream.start();
    onCleanup(() => upstream.close());
    return upstream;
  })
  .extend('gatewayEnv', { scope: 'file' }, ({ redis, upstream }): Record<string, string> => ({
    REDIS_URL: redis.url,
    UPSTREAM_URL: upstream.url,
  }))
  .extend('gateways', { scope: 'file' }, async ({}, { onCleanup }) => {
    const gateways = new GatewayLauncher();
    onCleanup(() => gateways.closeAll());
    return gateways;
  });

export interface GatewaySetup {
  /** The config (see gatewayYaml); ${REDIS_URL} and ${UPSTREAM_URL} are the file's redis-server and upstream. */
  readonly config: string;
  /** More environment for the config's ${...} references. */
  readonly env?: Record<string, string>;
  readonly options?: Partial<GatewayOptions>;
  /** False for a config without Redis: then no redis-server is started for it. */
  readonly redis?: boolean;
}

/** `test` with `gateway` too: one gateway of `setup` for the whole file, in front of its servers. */
export function gatewayTest(setup: GatewaySetup) {
  const env = setup.env ?? {};
  if (setup.redis === false) {
    return test.extend('gateway', { scope: 'file' }, async ({ upstream, gateways }) =>
      gateways.start(setup.config, { UPSTREAM_URL: upstream.url, ...env }, setup.options),
    );
  }
  return test.extend('gateway', { scope: 'file' }, async ({ gatewayEnv, gateways }) =>
    gateways.start(setup.config, { ...gatewayEnv, ...env }, setup.options),
  );
}

/**
 * `test` with `gateway`: the shipped config (config/gateway.yaml) counting in the file's Redis,
 * every upstream the file's TestUpstream, X-Forwarded-For trusted from 127.0.0.1, and one valid
 * workspace token, 7|s3cret (a static store stands in for the database). `env` adds to its environment.
 */
export function shippedConfigTest(env: Record<string, string> = {}) {
  return test.extend('gateway', { scope: 'file' }, ({ redis, upstream, gateways }) =>
    gateways.start(
      DEFAULT_CONFIG,
      defaultEnv(upstream.url, { REDIS_URL: redis.url, TRUSTED_PROXIES: '127.0.0.1', ...env }),
      { workspaceTokens: new StaticTokenStore([{ id: '7', sha256: sha256Hex('s3cret') }]) },
    ),
  );
}

export interface EmbeddedSetup {
  /** More environment for the shipped config (see embeddedEnv), e.g. TRUSTED_PROXIES. */
  readonly env?: Record<string, string>;
  /** True to count in the file's redis-server (REDIS_URL); else the in-process store counts. */
  readonly redis?: boolean;
  /** Workspaces the database holds before the start, as `tollgate tokens create` makes them. */
  readonly workspaces?: readonly string[];
}

/**
 * `test` for a file of the embedded services: the shipped config with its embedded services, in
 * this process, on a fresh data directory, started when a test first names it and closed after
 * the file's last test:
 * - `dataDir`: the gateway's data directory (a real SQLite file);
 * - `gateway`: the gateway of `setup`;
 * - `db`: a second connection to the gateway's database file, as an operator's;
 * - `pages`: the local test pages the report tests analyse.
 */
export function embeddedTest(setup: EmbeddedSetup = {}) {
  const env = setup.env ?? {};
  const files = test
    .extend('dataDir', { scope: 'file' }, (): string => dataDirWithWorkspaces(...(setup.workspaces ?? [])))
    .extend('db', { scope: 'file' }, ({ dataDir }, { onCleanup }) => {
      const db = openDatabase(dataDir);
      onCleanup(() => {
        db.close();
      });
      return db;
    })
    .extend('pages', { scope: 'file' }, async ({}, { onCleanup }) => {
      const pages = await TestPages.start();
      onCleanup(() => pages.close());
      return pages;
    });
  if (setup.redis) {
    return files.extend('gateway', { scope: 'file' }, ({ dataDir, redis, gateways }) =>
      gateways.start(DEFAULT_CONFIG, embeddedEnv(dataDir, { REDIS_URL: redis.url, ...env })),
    );
  }
  return files.extend('gateway', { scope: 'file' }, ({ dataDir, gateways }) =>
    gateways.start(DEFAULT_CONFIG, embeddedEnv(dataDir, env)),
  );
}
