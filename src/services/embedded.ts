import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import type { WorkspaceTokenStore } from '../credentials/workspace-token.js';
import type { ServicesConfig } from './config.js';
import type { ServiceName } from '../service-names.js';
import { openServiceDatabase, startService, type RunningService } from './registry.js';
import { DatabaseTokenStore } from './accounts/workspaces.js';

/**
 * The embedded services of one gateway process, started on first use on a loopback port, so the
 * gateway forwards to them over real HTTP exactly as to a remote upstream. They share one database.
 */
export class EmbeddedServices {
  #db: Db | undefined;
  readonly #running = new Map<ServiceName, Promise<RunningService>>();
  #tokens: WorkspaceTokenStore | undefined;

  constructor(
    private readonly config: ServicesConfig,
    private readonly logger: Logger,
  ) {}

  get db(): Db {
    this.#db ??= openServiceDatabase(this.config, this.logger);
    return this.#db;
  }

  /** The base URL of the running service, starting it if needed. */
  async url(name: ServiceName): Promise<string> {
    let running = this.#running.get(name);
    if (!running) {
      running = startService(name, { db: this.db, config: this.config, logger: this.logger }, '127.0.0.1', 0);
      this.#running.set(name, running);
      const { url } = await running;
      this.logger.info({ embedded: name, url }, 'embedded service started');
    }
    return (await running).url;
  }

  /** The workspace tokens `tollgate tokens create` issues, checked in the database on every call. */
  tokenStore(): WorkspaceTokenStore {
    this.#tokens ??= new DatabaseTokenStore(this.db);
    return this.#tokens;
  }

  async close(): Promise<void> {
    const running = await Promise.allSettled(this.#running.values());
    await Promise.all(running.map((r) => (r.status === 'fulfilled' ? r.value.close() : undefined)));
    this.#running.clear();
    this.#tokens = undefined;
    this.#db?.close();
    this.#db = undefined;
  }
}
