import { SERVICE_NAMES, type ServiceName } from '../service-names.js';
import { loadConfigFile } from '../rules/load.js';
import { createLogger } from '../logger.js';
import { openServiceDatabase, startService } from '../services/registry.js';
import { servicesConfigFrom } from './services-config.js';
import { stopSignal } from './signals.js';
import { UsageError } from './usage-error.js';

/** `tollgate serve NAME --port N`: one embedded service alone, for a gateway elsewhere to front. */
export async function serve(
  configFile: string,
  name: string | undefined,
  host: string,
  port: string,
): Promise<number> {
  if (!SERVICE_NAMES.includes(name as ServiceName)) {
    throw new UsageError(`serve needs one of ${SERVICE_NAMES.join(', ')}`);
  }
  const portNumber = Number(port);
  if (!Number.isInteger(portNumber) || portNumber < 0 || portNumber > 65535)
    throw new UsageError(`--port must be a port number, got "${port}"`);
  const { config } = await loadConfigFile(configFile);
  const logger = createLogger(config.log.level);
  const services = servicesConfigFrom(config);
  const db = openServiceDatabase(services, logger);
  const service = await startService(name as ServiceName, { db, config: services, logger }, host, portNumber);
  logger.info({ embedded: name, url: service.url }, 'listening');
  await stopSignal(logger);
  await service.close();
  db.close();
  return 0;
}
