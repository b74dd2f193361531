import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { checkpointIfLarge } from '../db/checkpoint.js';
import { openDatabase, type Db } from '../db/database.js';
import { createServiceApp, listen } from './kit/app.js';
import { bulkSyncService } from './bulksync/service.js';
import type { ServicesConfig } from './config.js';
import type { ServiceName } from '../service-names.js';
import type { ServiceContext } from './context.js';
import { bootstrapAccounts } from './accounts/first-start.js';
import { every } from './kit/housekeeping.js';
import { openApiDocument } from './kit/openapi.js';
import { reportsService } from './reports/service.js';
import type { ServiceDefinition } from './service-definition.js';
import { websitesService } from './websites/service.js';
import { widgetService } from './widget/service.js';

export const SERVICES: Record<ServiceName, ServiceDefinition> = {
  websites: websitesService,
  reports: reportsService,
  widget: widgetService,
  bulksync: bulkSyncService,
};

export interface RunningService {
  readonly name: ServiceName;
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Opens the database and applies the config's bootstrap accounts (API keys, workspace token, a first
 * start's admin and demo workspace); a workspace without an owner goes to the first user.
 */
export function openServiceDatabase(config: ServicesConfig, logger: Logger): Db {
  const db = openDatabase(config.dataDir);
  try {
    bootstrapAccounts(db, config, logger);
  } catch (err) {
    db.close();
    throw err;
  }
  const { walCheckpointSize, housekeepingInterval } = config.storage;
  const stop = every(
    housekeepingInterval,
    () => void checkpointIfLarge(db, walCheckpointSize),
    logger,
    'WAL checkpoint',
  );
  // The checkpoints live as long as this connection: whoever closes it stops them.
  const close = db.close.bind(db);
  db.close = () => {
    void stop();
    return close();
  };
  return db;
}

/** Builds a service's app (not listening): for tests through fastify's inject, and for startService. */
export async function buildService(name: ServiceName, ctx: ServiceContext): Promise<FastifyInstance> {
  const definition = SERVICES[name];
  const app = createServiceApp({
    logger: ctx.logger.child({ embedded: name }),
    errors: definition.errors,
    bodyLimit: ctx.config.maxBodySize,
  });
  if (definition.servesOpenApi) {
    const document = servicesOpenApi();
    app.get('/api/v1/openapi.json', { config: { public: true } }, async () => document);
  }
  await definition.register(app, ctx);
  await app.ready();
  return app;
}

export async function startService(
  name: ServiceName,
  ctx: ServiceContext,
  host: string,
  port: number,
): Promise<RunningService> {
  const app = await buildService(name, ctx);
  const url = await listen(app, host, port);
  return { name, url, close: () => app.close() };
}

/** The OpenAPI 3.1 document of all four services (checked in as docs/openapi.json). */
export function servicesOpenApi(): object {
  return openApiDocument(Object.values(SERVICES).map((s) => s.openapi));
}
