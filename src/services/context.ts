import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import type { Db } from '../db/database.js';

/** What an embedded service is built from: the shared database and the config it reads its settings from. */
export interface ServiceContext {
  readonly db: Db;
  /** The whole config: services.* for the services, identity.jwt for the widget's tokens. */
  readonly config: GatewayConfig;
  readonly logger: Logger;
}
