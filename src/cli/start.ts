import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { AggregatorRegistry } from 'prom-client';
import type { Logger } from 'pino';
import { loadConfigFile } from '../rules/load.js';
import type { RuleTable } from '../rules/compile.js';
import type { GatewayConfig } from '../config/schema.js';
import { adminUrl, startAdminServer } from '../runtime/admin.js';
import { adminBanRoutes } from '../runtime/admin-bans.js';
import { overrideRoutes } from '../runtime/admin-overrides.js';
import { LiveOverrides } from '../runtime/overrides.js';
import { sharedOverrides } from '../store/shared-overrides.js';
import { answerOperatorViews, workersOperatorRoutes } from '../runtime/admin-operator-cluster.js';
import { checkPortsFree, listenTargets } from '../runtime/listen.js';
import { createLogger } from '../logger.js';
import { createStore } from '../store/create-store.js';
import { checkCertificates } from './check-certificates.js';
import { reloadFromFile, tlsFiles, watchConfigFile, watchFiles } from './reloader.js';
import { stopSignal } from './signals.js';
import { startGatewayWithServices } from './wiring.js';

export function workerCount(config: GatewayConfig): number {
  return config.workers === 'auto' ? availableParallelism() : config.workers;
}

/** `tollgate start`: one gateway in this process, or a node:cluster primary with N workers on one port. */
export async function start(configFile: string): Promise<number> {
  const table = await loadConfigFile(configFile);
  // A bad certificate file is a config error, reported before any listener (or worker) starts.
  if (cluster.isPrimary) await checkCertificates(configFile, table.config);
  const logger = createLogger(table.config.log.level);
  if (cluster.isWorker) return runWorker(configFile, table, logger);
  // A port already taken fails here, in one line, before the store or the services start.
  await checkPortsFree(listenTargets(table.config));
  const workers = workerCount(table.config);
  if (workers > 1) return runPrimary(configFile, table, workers, logger);

  const gateway = await startGatewayWithServices(table, { logger });
  const reload = () => void reloadFromFile(gateway, configFile, logger);
  const reloadCertificates = () => void gateway.reloadCertificates();
  const onHangup = () => {
    reload();
    reloadCertificates();
  };
  process.on('SIGHUP', onHangup);
  const watchers = table.config.reload.watch
    ? [watchConfigFile(configFile, reload), ...watchFiles(tlsFiles(table.config), reloadCertificates)]
    : [];
  await stopSignal(logger);
  for (const w of watchers) w.close();
  process.off('SIGHUP', onHangup);
  await gateway.close();
  return 0;
}

async function runWorker(configFile: string, table: RuleTable, logger: Logger): Promise<number> {
  const gateway = await startGatewayWithServices(table, { logger, adminListener: false });
  new AggregatorRegistry(); // installs the listener that answers the primary's metrics requests
  AggregatorRegistry.setRegistries([gateway.metrics.registry]);
  // And the operator page's figures, which the primary sums as it sums the metrics.
  const keyPrefix = table.config.store.redis.keyPrefix;
  const stopAnswering = answerOperatorViews({
    metrics: gateway.metrics,
    store: gateway.store,
    current: () => ({ table: gateway.table, keyPrefix }),
    lastReload: () => gateway.lastReload,
  });
  const onMessage = (message: unknown) => {
    if (message === 'tollgate:reload') void reloadFromFile(gateway, configFile, logger);
    if (message === 'tollgate:reload' || message === 'tollgate:certificates')
      void gateway.reloadCertificates();
  };
  process.on('message', onMessage);
  await stopSignal(logger);
  process.off('message', onMessage);
  stopAnswering();
  await gateway.close();
  return 0;
}

/** Forks the workers, restarts any that die, serves their aggregated metrics, and relays reloads. */
async function runPrimary(
  configFile: string,
  loaded: RuleTable,
  count: number,
  logger: Logger,
): Promise<number> {
  const config = loaded.config;
  let table = loaded;
  // Store settings no reconnection cures (a wrong password, an untrusted certificate) would make
  // every worker fail at start, and be restarted, forever: the primary checks them once first.
  await checkStoreSettings(config);
  let stopping = false;
  const fork = () => cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    logger.error({ pid: worker.process.pid, code, signal }, 'worker died: starting another');
    fork();
  });
  for (let i = 0; i < count; i++) fork();
  logger.info({ workers: count }, 'started workers');

  const aggregator = new AggregatorRegistry();
  // The overrides admin API is served here; the workers apply what it stores within a poll.
  const overrides = config.admin
    ? new LiveOverrides(sharedOverrides(config.store, logger), logger)
    : undefined;
  await overrides?.configure(config.tiers.overrides);
  // And the bans API, on a store client of its own (workers need Redis, so bans are there).
  const banStore = config.admin ? createStore(config.store, logger) : undefined;
  const banRoutes = banStore
    ? adminBanRoutes({
        store: banStore,
        current: () => ({ table, keyPrefix: config.store.redis.keyPrefix }),
      })
    : [];
  const admin = config.admin
    ? await startAdminServer(
        config.admin.host,
        config.admin.port,
        { contentType: aggregator.contentType, metrics: () => aggregator.clusterMetrics() },
        {
          token: config.admin.token,
          routes: [...overrideRoutes(overrides!), ...banRoutes, ...workersOperatorRoutes()],
        },
      )
    : undefined;
  if (admin) logger.info({ listener: 'admin', url: adminUrl(admin) }, 'listening');
  const relay = (message: string) => () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.send(message);
  };
  const relayReload = relay('tollgate:reload');
  const reload = () => {
    relayReload();
    // The bans API checks limiter names against the rules: keep its table as the workers' own.
    loadConfigFile(configFile).then(
      (next) => (table = next),
      () => undefined, // the workers log why the reload failed
    );
  };
  process.on('SIGHUP', reload);
  const watchers = config.reload.watch
    ? [watchConfigFile(configFile, reload), ...watchFiles(tlsFiles(config), relay('tollgate:certificates'))]
    : [];

  await stopSignal(logger);
  stopping = true;
  for (const w of watchers) w.close();
  admin?.close();
  const exits = Object.values(cluster.workers ?? {}).map(async (worker) => {
    if (!worker || worker.isDead()) return;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.process.kill('SIGTERM');
    await exited;
  });
  await Promise.all(exits);
  await Promise.all([overrides?.close(), banStore?.close()]);
  return 0;
}

/** Connects to the configured store and closes it again; throws StoreConfigError for wrong settings. */
async function checkStoreSettings(config: GatewayConfig): Promise<void> {
  const store = createStore(config.store);
  try {
    await store.connect(); // false (Redis away) is not the primary's concern: the workers ride it out
  } finally {
    await store.close();
  }
}
