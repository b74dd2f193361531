import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import type { StatsSource } from './websites/analytics/stats-source.js';
import type { ServicesConfig } from './config.js';

/** What an embedded service is built from: the shared database, its settings, and a logger. */
export interface ServiceContext {
  readonly db: Db;
  readonly config: ServicesConfig;
  readonly logger: Logger;
  /** What the statistics pages read; unset: the analytics aggregates in `db`. */
  readonly stats?: StatsSource;
}
