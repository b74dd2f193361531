import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { AggregatorRegistry } from 'prom-client';
import type { Logger } from 'pino';
import { loadConfigFile } from '../config/load.js';
import type { RuleTable } from '../config/rule-table.js';
import type { GatewayConfig } from '../config/schema.js';
import { adminUrl, startAdminServer } from '../http/admin.js';
import { createLogger } from '../logger.js';
import { reloadFromFile, watchConfigFile } from './reloader.js';
import { stopSignal } from './signals.js';
import { startGatewayWithServices } from './wiring.js';

export function workerCount(config: GatewayConfig): number {
  return config.workers === 'auto' ? availableParallelism() : config.workers;
}

/** `tollgate start`: one gateway in this process, or a node:cluster primary with N workers on one port. */
export async function start(configFile: string): Promise<number> {
  const table = await loadConfigFile(configFile);
  const logger = createLogger(table.config.log.level);
  if (cluster.isWorker) return runWorker(configFile, table, logger);
  const workers = workerCount(table.config);
  if (workers > 1) return runPrimary(configFile, table.config, workers, logger);

  const gateway = await startGatewayWithServices(table, { logger });
  const reload = () => void reloadFromFile(gateway, configFile, logger);
  process.on('SIGHUP', reload);
  const watcher = table.config.reload.watch ? watchConfigFile(configFile, reload) : undefined;
  await stopSignal(logger);
  watcher?.close();
  process.off('SIGHUP', reload);
  await gateway.close();
  return 0;
}

async function runWorker(configFile: string, table: RuleTable, logger: Logger): Promise<number> {
  const gateway = await startGatewayWithServices(table, { logger, adminListener: false });
  new AggregatorRegistry(); // installs the listener that answers the primary's metrics requests
  AggregatorRegistry.setRegistries([gateway.metrics.registry]);
  const onMessage = (message: unknown) => {
    if (message === 'tollgate:reload') void reloadFromFile(gateway, configFile, logger);
  };
  process.on('message', onMessage);
  await stopSignal(logger);
  process.off('message', onMessage);
  await gateway.close();
  return 0;
}

/** Forks the workers, restarts any that die, serves their aggregated metrics, and relays reloads. */
async function runPrimary(
  configFile: string,
  config: GatewayConfig,
  count: number,
  logger: Logger,
): Promise<number> {
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
  const admin = config.admin
    ? await startAdminServer(config.admin.host, config.admin.port, {
        contentType: aggregator.contentType,
        metrics: () => aggregator.clusterMetrics(),
      })
    : undefined;
  if (admin) logger.info({ listener: 'admin', url: adminUrl(admin) }, 'listening');
  const reload = () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.send('tollgate:reload');
  };
  process.on('SIGHUP', reload);
  const watcher = config.reload.watch ? watchConfigFile(configFile, reload) : undefined;

  await stopSignal(logger);
  stopping = true;
  watcher?.close();
  admin?.close();
  const exits = Object.values(cluster.workers ?? {}).map(async (worker) => {
    if (!worker || worker.isDead()) return;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.process.kill('SIGTERM');
    await exited;
  });
  await Promise.all(exits);
  return 0;
}
