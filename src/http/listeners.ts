import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { ListenerConfig } from '../config/schema.js';
import { adminUrl, startAdminServer, type MetricsSource } from './admin.js';

export interface BoundListener {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly url: string;
}

/** The sockets of one gateway: a server per public listener, and the admin listener. */
export class Listeners {
  readonly bound: BoundListener[] = [];
  /** Every public server, including one whose bind failed (so a failed start can still close it). */
  readonly servers: Server[] = [];
  #admin: Server | undefined;

  constructor(private readonly logger: Logger) {}

  /** Binds each listener in turn, each with its own request handler; logs "listening" for each. */
  async openPublic(
    configs: readonly ListenerConfig[],
    handlerFor: (cfg: ListenerConfig) => RequestListener,
  ): Promise<void> {
    for (const cfg of configs) {
      const handle = handlerFor(cfg);
      const server = createServer(handle);
      // "Expect: 100-continue" is answered only once the request may pass (see request-handler),
      // so a refused client never uploads its body.
      server.on('checkContinue', handle);
      this.servers.push(server);
      server.listen(cfg.port, cfg.host);
      await once(server, 'listening');
      // After listening, 'error' means a failed accept (EMFILE, …): log it, never crash on it.
      server.on('error', (err) => this.logger.error({ err, listener: cfg.name }, 'listener error'));
      const { port } = server.address() as AddressInfo;
      const host = cfg.host.includes(':') ? `[${cfg.host}]` : cfg.host;
      const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '[::]' ? '[::1]' : host;
      this.bound.push({ name: cfg.name, host: cfg.host, port, url: `http://${reachable}:${port}` });
      this.logger.info({ listener: cfg.name, host: cfg.host, port }, 'listening');
    }
  }

  async openAdmin(host: string, port: number, source: MetricsSource): Promise<void> {
    this.#admin = await startAdminServer(host, port, source);
    this.#admin.on('error', (err) => this.logger.error({ err, listener: 'admin' }, 'listener error'));
    this.logger.info({ listener: 'admin', url: this.adminUrl }, 'listening');
  }

  /** The base URL of the named listener, or of the first. */
  url(listener?: string): string {
    const l = listener ? this.bound.find((x) => x.name === listener) : this.bound[0];
    if (!l) throw new Error(`no listener "${listener}"`);
    return l.url;
  }

  get adminUrl(): string | undefined {
    return this.#admin && adminUrl(this.#admin);
  }

  /** Closes the admin listener and its connections at once: scrapes need no drain. */
  closeAdmin(): void {
    this.#admin?.close();
    this.#admin?.closeAllConnections();
  }
}
