import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { RuleTable } from '../config/rule-table.js';
import type { WorkspaceTokenStore } from '../identity/workspace-token.js';
import { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { createStore } from '../store/create-store.js';
import type { WindowStore } from '../store/window-store.js';
import { adminUrl, startAdminServer } from './admin.js';
import { createRequestHandler } from './request-handler.js';
import type { Upstream } from '../proxy/upstream.js';
import { LiveStreams } from '../proxy/live-streams.js';
import { Admission } from '../limits/admission.js';
import { EmbeddedServices } from '../services/embedded.js';
import { buildState, closeState, closeUpstreams, retiredUpstreams, type GatewayState } from './state.js';

export interface GatewayOptions {
  readonly logger: Logger;
  /** Defaults to the store the config names. */
  readonly store?: WindowStore;
  readonly workspaceTokens?: WorkspaceTokenStore;
  readonly metrics?: GatewayMetrics;
  /** False in node:cluster workers: the primary serves the aggregated metrics. */
  readonly adminListener?: boolean;
}

export interface BoundListener {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly url: string;
}

/**
 * Settings a reload cannot change: they belong to sockets, connections and embedded services
 * opened at start. identity.jwt is among them because the embedded widget signs with the entry the
 * gateway verifies with: the two must not drift apart.
 */
const RESTART_ONLY: readonly string[][] = [
  ['listeners'],
  ['admin'],
  ['workers'],
  ['store'],
  ['reload'],
  ['services'],
  ['identity', 'jwt'],
  ['identity', 'workspaceTokens', 'cacheTtl'],
];

const at = (config: object, path: readonly string[]): unknown =>
  path.reduce<unknown>((v, key) => (v as Record<string, unknown> | undefined)?.[key], config);

/** The gateway process: its listeners, its store and the current rule table (swappable at run time). */
export class Gateway {
  readonly listeners: BoundListener[] = [];
  readonly metrics: GatewayMetrics;
  readonly #servers: Server[] = [];
  #admin: Server | undefined;
  #state: GatewayState;
  /** Upstreams a reload replaced: closed after the drain timeout, once requests that hold the old table are done. */
  readonly #retired = new Set<Upstream>();
  readonly #retireTimers = new Set<NodeJS.Timeout>();
  readonly #liveStreams = new LiveStreams();
  /** Concurrency slots held, shared by every listener and kept across reloads (in-flight requests release into it). */
  readonly admission = new Admission();
  #closing: Promise<void> | undefined;

  private constructor(
    state: GatewayState,
    readonly store: WindowStore,
    private readonly options: GatewayOptions & {
      readonly metrics: GatewayMetrics;
      readonly embedded: EmbeddedServices;
    },
  ) {
    this.#state = state;
    this.metrics = options.metrics;
  }

  static async start(table: RuleTable, given: GatewayOptions): Promise<Gateway> {
    // A logger of its own: a reload sets its level without touching the caller's.
    const options = { ...given, logger: given.logger.child({}) };
    const metrics = options.metrics ?? new GatewayMetrics({ processMetrics: true });
    const store = options.store ?? createStore(table.config.store, options.logger, metrics);
    if (!(await store.connect())) {
      options.logger.warn(
        "rate-limit store not reachable yet: starting anyway, applying each limiter's onStoreError",
      );
    }
    const embedded = new EmbeddedServices(table.config, options.logger);
    let state: GatewayState;
    try {
      state = await buildState(table, { ...options, embedded });
    } catch (err) {
      await Promise.all([embedded.close(), store.close()]);
      throw err;
    }
    const gateway = new Gateway(state, store, { ...options, metrics, embedded });
    try {
      await gateway.#listen();
    } catch (err) {
      await gateway.close();
      throw err;
    }
    return gateway;
  }

  get table(): RuleTable {
    return this.#state.table;
  }

  url(listener?: string): string {
    const l = listener ? this.listeners.find((x) => x.name === listener) : this.listeners[0];
    if (!l) throw new Error(`no listener "${listener}"`);
    return l.url;
  }

  /** The admin listener's address (GET /metrics), when one runs. */
  get adminUrl(): string | undefined {
    return this.#admin && adminUrl(this.#admin);
  }

  /**
   * Replaces the rule table atomically: requests already in flight finish under the old one.
   * Counters live in the store, so they survive; a changed limit applies to them at once.
   */
  async reload(table: RuleTable): Promise<void> {
    const old = this.#state;
    this.#state = await buildState(table, this.options, old);
    this.metrics.configReload(true);
    if (table.config.log.level !== old.table.config.log.level)
      this.options.logger.level = table.config.log.level;
    for (const path of RESTART_ONLY) {
      if (JSON.stringify(at(old.table.config, path)) !== JSON.stringify(at(table.config, path))) {
        const field = path.join('.');
        this.options.logger.warn({ field }, 'config reloaded, but this field changes only on restart');
      }
    }
    this.options.logger.info(
      { routes: table.routes.length, limiters: table.limiters.size },
      'config reloaded',
    );
    // A request that took the old table may not have reached its upstream yet (it may be waiting
    // on the store): retired pools stay open for the longer drain timeout plus the store's command
    // timeout, then finish what they carry. Shutdown closes them at once.
    const retired = retiredUpstreams(old, this.#state);
    if (retired.length === 0) return;
    for (const u of retired) this.#retired.add(u);
    const graceMs =
      Math.max(old.table.config.shutdown.drainTimeout, table.config.shutdown.drainTimeout) +
      2 * old.table.config.store.redis.commandTimeout;
    const timer = setTimeout(() => {
      this.#retireTimers.delete(timer);
      for (const u of retired) this.#retired.delete(u);
      closeUpstreams(retired).catch((err: unknown) =>
        this.options.logger.warn({ err }, 'closing old upstream pools'),
      );
    }, graceMs);
    timer.unref();
    this.#retireTimers.add(timer);
  }

  async #listen(): Promise<void> {
    const { listeners, admin } = this.#state.table.config;
    for (const cfg of listeners) {
      const handle = createRequestHandler({
        state: () => this.#state,
        store: this.store,
        logger: this.options.logger,
        metrics: this.metrics,
        protocol: cfg.protocol,
        ietfHeaders: cfg.ietfHeaders,
        liveStreams: this.#liveStreams,
        admission: this.admission,
      });
      const server = createServer(handle);
      // "Expect: 100-continue" is answered only once the request may pass (see request-handler),
      // so a refused client never uploads its body.
      server.on('checkContinue', handle);
      this.#servers.push(server);
      server.listen(cfg.port, cfg.host);
      await once(server, 'listening');
      // After listening, 'error' means a failed accept (EMFILE, …): log it, never crash on it.
      server.on('error', (err) => this.options.logger.error({ err, listener: cfg.name }, 'listener error'));
      const { port } = server.address() as AddressInfo;
      const host = cfg.host.includes(':') ? `[${cfg.host}]` : cfg.host;
      const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '[::]' ? '[::1]' : host;
      this.listeners.push({ name: cfg.name, host: cfg.host, port, url: `http://${reachable}:${port}` });
      this.options.logger.info({ listener: cfg.name, host: cfg.host, port }, 'listening');
    }
    if (admin && this.options.adminListener !== false) {
      this.#admin = await startAdminServer(admin.host, admin.port, this.metrics.registry);
      this.#admin.on('error', (err) =>
        this.options.logger.error({ err, listener: 'admin' }, 'listener error'),
      );
      this.options.logger.info({ listener: 'admin', url: this.adminUrl }, 'listening');
    }
  }

  /** Stops accepting, lets in-flight requests finish for up to the drain timeout, then closes the store. */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    const drainMs = this.#state.table.config.shutdown.drainTimeout;
    this.#admin?.close();
    this.#admin?.closeAllConnections();
    const closed = Promise.all(
      this.#servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
    );
    // Event streams never end by themselves: end them now (their clients reconnect elsewhere).
    this.#liveStreams.endAll();
    // Keep-alive connections become idle as their last response ends: close them as they do.
    const reaper = setInterval(() => this.#servers.forEach((s) => s.closeIdleConnections()), 50);
    this.#servers.forEach((s) => s.closeIdleConnections());
    let timer: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      closed.then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), drainMs))),
    ]);
    clearTimeout(timer);
    clearInterval(reaper);
    if (!drained) {
      this.options.logger.warn({ drainMs }, 'drain timeout: closing remaining connections');
      for (const s of this.#servers) s.closeAllConnections();
    }
    for (const timer of this.#retireTimers) clearTimeout(timer);
    await Promise.all([closeState(this.#state), closeUpstreams(this.#retired)]);
    await Promise.all([this.store.close(), this.options.embedded.close()]);
  }
}
