import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import type { Logger } from 'pino';
import type { ListenerConfig } from '../config/schema.js';
import { adminUrl, startAdminServer, type AdminOptions, type MetricsSource } from './admin.js';
import type { DrainableServer } from './drain.js';
import { listen } from './listen.js';
import { SecureListener } from './tls/secure-listener.js';

export interface BoundListener {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly url: string;
}

/** A public listener's server: the socket it binds, and how a drain closes it. */
export interface ListenerServer {
  readonly net: NetServer;
  readonly drainable: DrainableServer;
  /** Set on a TLS listener. */
  readonly secure?: SecureListener;
}

/**
 * Creates the server of one public listener (not yet listening): plain HTTP/1.1, or TLS with
 * HTTP/2 and HTTP/1.1 by ALPN when the listener has a `tls` block.
 */
export async function createListenerServer(
  cfg: ListenerConfig,
  handle: RequestListener,
  logger: Logger,
): Promise<ListenerServer> {
  if (cfg.tls) {
    const secure = await SecureListener.create({ ...cfg, tls: cfg.tls }, handle, logger);
    return { net: secure.server, drainable: secure, secure };
  }
  const server: Server = createServer(handle);
  // "Expect: 100-continue" is answered only once the request may pass (see request-handler),
  // so a refused client never uploads its body.
  server.on('checkContinue', handle);
  return { net: server, drainable: server };
}

/** The sockets of one gateway: a server per public listener, and the admin listener. */
export class Listeners {
  readonly bound: BoundListener[] = [];
  /** Every public server, including one whose bind failed (so a failed start can still close it). */
  readonly servers: DrainableServer[] = [];
  /** The TLS listeners, by name (their certificates reload). */
  readonly secure = new Map<string, SecureListener>();
  #admin: Server | undefined;

  constructor(private readonly logger: Logger) {}

  /** Binds each listener in turn, each with its own request handler; logs "listening" for each. */
  async openPublic(
    configs: readonly ListenerConfig[],
    handlerFor: (cfg: ListenerConfig) => RequestListener,
  ): Promise<void> {
    for (const cfg of configs) {
      const {
        net: server,
        drainable,
        secure,
      } = await createListenerServer(cfg, handlerFor(cfg), this.logger);
      this.servers.push(drainable);
      if (secure) this.secure.set(cfg.name, secure);
      await listen(server, { host: cfg.host, port: cfg.port, what: `${cfg.name} listener` });
      // After listening, 'error' means a failed accept (EMFILE, …): log it, never crash on it.
      server.on('error', (err) => this.logger.error({ err, listener: cfg.name }, 'listener error'));
      const { port } = server.address() as AddressInfo;
      const host = cfg.host.includes(':') ? `[${cfg.host}]` : cfg.host;
      const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '[::]' ? '[::1]' : host;
      const scheme = cfg.tls ? 'https' : 'http';
      const url = `${scheme}://${reachable}:${port}`;
      this.bound.push({ name: cfg.name, host: cfg.host, port, url });
      this.logger.info({ listener: cfg.name, host: cfg.host, port, url }, 'listening');
    }
  }

  async openAdmin(
    host: string,
    port: number,
    source: MetricsSource,
    options: AdminOptions = {},
  ): Promise<void> {
    this.#admin = await startAdminServer(host, port, source, options);
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
