import type { Logger } from 'pino';
import type { EmbeddedServiceName, GatewayConfig } from '../config/schema.js';
import type { Db } from '../db/database.js';
import { CachedTokenStore, type WorkspaceTokenStore } from '../identity/workspace-token.js';
import { openServiceDatabase, startService, type RunningService } from './registry.js';
import { DatabaseTokenStore } from './workspaces.js';

/**
 * The embedded services of one gateway process, started on first use on a loopback port, so the
 * gateway forwards to them over real HTTP exactly as to a remote upstream. They share one database.
 * Their settings (services.*) are read once: changing them needs a restart.
 */
export class EmbeddedServices {
  #db: Db | undefined;
  readonly #running = new Map<EmbeddedServiceName, Promise<RunningService>>();
  #tokens: WorkspaceTokenStore | undefined;

  constructor(
    private readonly config: GatewayConfig,
    private readonly logger: Logger,
  ) {}

  get db(): Db {
    this.#db ??= openServiceDatabase(this.config, this.logger);
    return this.#db;
  }

  /** The base URL of the running service, starting it if needed. */
  async url(name: EmbeddedServiceName): Promise<string> {
    let running = this.#running.get(name);
    if (!running) {
      running = startService(name, { db: this.db, config: this.config, logger: this.logger }, '127.0.0.1', 0);
      this.#running.set(name, running);
      const { url } = await running;
      this.logger.info({ embedded: name, url }, 'embedded service started');
    }
    return (await running).url;
  }

  /** The database-backed workspace tokens, with verified tokens cached for identity.workspaceTokens.cacheTtl. */
  tokenStore(): WorkspaceTokenStore {
    this.#tokens ??= new CachedTokenStore(
      new DatabaseTokenStore(this.db),
      this.config.identity.workspaceTokens.cacheTtl,
    );
    return this.#tokens;
  }

  async close(): Promise<void> {
    const running = await Promise.allSettled(this.#running.values());
    await Promise.all(running.map((r) => (r.status === 'fulfilled' ? r.value.close() : undefined)));
    this.#running.clear();
    this.#db?.close();
    this.#db = undefined;
  }
}
