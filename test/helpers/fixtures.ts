import { rmSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { test as base } from 'vitest';
import { servicesConfigFrom } from '../../src/cli/services-config.js';
import type { Gateway, GatewayOptions } from '../../src/runtime/gateway.js';
import { sha256Hex } from '../../src/credentials/digest.js';
import { StaticTokenStore } from '../../src/identity/token-verification.js';
import { openDatabase } from '../../src/db/database.js';
import { loadConfigText } from '../../src/rules/load.js';
import { openServiceDatabase } from '../../src/services/registry.js';
import { DEFAULT_CONFIG, defaultEnv } from './default-config.js';
import { dataDirWithWorkspaces, embeddedEnv, newDataDir } from './embedded.js';
import { silentLogger, startGateway } from './gateway.js';
import { RedisCluster } from './redis-cluster.js';
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
 * - `launch(env)`: starts another gateway of `setup` (`env` added) on the same data directory, as
 *   a restart does;
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
  // The gateway's environment beyond embeddedEnv's: the file's Redis only when asked for.
  const withEnv = setup.redis
    ? files.extend('launchEnv', { scope: 'file' }, ({ redis }): Record<string, string> => ({
        REDIS_URL: redis.url,
        ...env,
      }))
    : files.extend('launchEnv', { scope: 'file' }, (): Record<string, string> => env);
  return withEnv
    .extend(
      'launch',
      { scope: 'file' },
      ({ dataDir, launchEnv, gateways }) =>
        (more: Record<string, string> = {}) =>
          gateways.start(DEFAULT_CONFIG, embeddedEnv(dataDir, { ...launchEnv, ...more })),
    )
    .extend('gateway', { scope: 'file' }, ({ launch }) => launch());
}

/**
 * `test` for a unit file of the embedded services (buildService + inject, no gateway): `services`
 * is the shipped config's services config on a fresh data directory, and its database with the
 * bootstrap accounts (ALICE_KEY, BOB_KEY), as buildService takes them; removed after the last test.
 */
export const servicesTest = base.extend('services', { scope: 'file' }, ({}, { onCleanup }) => {
  const dataDir = newDataDir();
  const config = servicesConfigFrom(
    loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', embeddedEnv(dataDir)).config,
  );
  const db = openServiceDatabase(config, silentLogger);
  onCleanup(() => {
    db.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { dataDir, config, db, logger: silentLogger };
});

/**
 * A file fixture: a headless Chromium (test/helpers/browser.ts), closed after the file's last test,
 * as in `.extend('browser', { scope: 'file' }, chromium)`. Imported when first named, so the files
 * without a browser never load Playwright.
 */
export async function chromium(
  // An object pattern: vitest reads a fixture's dependencies from it (none here).
  {}: object,
  { onCleanup }: { onCleanup: (cleanup: () => Promise<void>) => void },
): Promise<Browser> {
  const { launchChromium } = await import('./browser.js');
  const browser = await launchChromium();
  onCleanup(() => browser.close());
  return browser;
}

/**
 * `test` with `cluster` (a 3-master, 3-replica Redis Cluster of the file's own) and `pair` (two
 * gateways of `config` counting in it, ${REDIS_CLUSTER_NODES} and ${UPSTREAM_URL} resolved).
 */
export function clusterPairTest(config: string) {
  return test
    .extend('cluster', { scope: 'file' }, async ({}, { onCleanup }) => {
      const cluster = await RedisCluster.start();
      onCleanup(() => cluster.stop());
      return cluster;
    })
    .extend('pair', { scope: 'file' }, async ({ cluster, upstream, gateways }) => {
      const env = { REDIS_CLUSTER_NODES: cluster.seeds.join(','), UPSTREAM_URL: upstream.url };
      return [await gateways.start(config, env), await gateways.start(config, env)] as const;
    });
}
