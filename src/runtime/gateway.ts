import type { AdminRoute } from './admin-api.js';
import { adminBanRoutes } from './admin-bans.js';
import type { Logger } from 'pino';
import type { RuleTable } from '../rules/compile.js';
import type { WorkspaceTokenStore } from '../credentials/workspace-token.js';
import type { RateLimitServer } from './rate-limit-server.js';
import { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { LiveStreams } from '../proxy/live-streams.js';
import { createStoreParts, localFallback } from '../store/create-store.js';
import type { LocalFallback } from '../store/local-fallback.js';
import type { WindowStore } from '../store/window-store.js';
import { drainServers } from './drain.js';
import type { EmbeddedUpstreams } from './embedded-upstreams.js';
import { Listeners, type BoundListener } from './listeners.js';
import { LiveState } from './live-state.js';
import { PoolRetirement, retirementGraceMs } from './pool-retirement.js';
import { createDecisionHandler } from '../http/decision-handler.js';
import { createRequestHandler } from '../http/request-handler.js';
import { Admission } from '../limits/admission.js';
import { ResponseBuffers } from '../proxy/response-buffers.js';
import { retiredPools } from './build-state.js';
import { reloadCertificates } from './tls/certificate-reload.js';
import { overrideRoutes } from './admin-overrides.js';
import { LiveOverrides } from './overrides.js';
import { sharedOverrides } from '../store/shared-overrides.js';
import { operatorRoutes, type ReloadRecord } from './admin-operator.js';
import { operatorPageRoutes } from './admin-operator-page.js';
import { diffRules } from '../rules/diff.js';

export type { BoundListener } from './listeners.js';

export interface GatewayOptions {
  readonly logger: Logger;
  /** Defaults to the store the config names. */
  readonly store?: WindowStore;
  readonly workspaceTokens?: WorkspaceTokenStore;
  /**
   * The embedded services, for upstreams that name one (wired in by the CLI: src/cli/wiring.ts).
   * The gateway closes them last, once its requests to them are done. Absent: such upstreams are
   * left out, and identity.workspaceTokens.source "database" cannot start.
   */
  readonly embedded?: EmbeddedUpstreams;
  readonly metrics?: GatewayMetrics;
  /** False in node:cluster workers: the primary serves the aggregated metrics. */
  readonly adminListener?: boolean;
}

/**
 * The gateway process: it ties its listeners, the live state (swapped on reload), the pools a
 * reload retired and the store together, and takes them down in order on shutdown.
 */
export class Gateway {
  readonly metrics: GatewayMetrics;
  readonly #state: LiveState;
  readonly #listeners: Listeners;
  readonly #retirement: PoolRetirement;
  readonly #liveStreams = new LiveStreams();
  /** Concurrency slots held, shared by every listener and kept across reloads (in-flight requests release into it). */
  readonly admission = new Admission();
  readonly responseBuffers = new ResponseBuffers();
  /** Envoy's rate-limit service (gRPC), when rateLimitService is configured. */
  #rateLimitServer: RateLimitServer | undefined;
  #closing: Promise<void> | undefined;
  /** The last rules reload and what it changed, for the operator page. */
  #lastReload: ReloadRecord | undefined;

  private constructor(
    state: LiveState,
    readonly store: WindowStore,
    /** Counts onStoreError: local limiters while the store fails. */
    readonly fallback: LocalFallback,
    private readonly options: GatewayOptions & { readonly metrics: GatewayMetrics },
    /** Tier and limit overrides: the overrides file's and the admin API's (kept in the store). */
    readonly overrides: LiveOverrides,
  ) {
    this.#state = state;
    this.metrics = options.metrics;
    this.#listeners = new Listeners(options.logger);
    this.#retirement = new PoolRetirement(options.logger);
    this.metrics.inFlightFrom(() => ({
      requests: this.admission.requestsPerIp.total,
      streams: this.admission.streamsPerIp.total,
    }));
    this.metrics.configApplied(state.current.table.limiters.keys(), true);
  }

  static async start(table: RuleTable, given: GatewayOptions): Promise<Gateway> {
    // A logger of its own: a reload sets its level without touching the caller's.
    const options = { ...given, logger: given.logger.child({}) };
    const metrics = options.metrics ?? new GatewayMetrics({ processMetrics: true });
    // A given store (tests, tools) has no heartbeat: its fallback counts as the only instance.
    const { store, fallback } = options.store
      ? { store: options.store, fallback: localFallback(table.config.store, options.logger, metrics) }
      : createStoreParts(table.config.store, options.logger, metrics);
    let connected: boolean;
    try {
      connected = await store.connect();
    } catch (err) {
      // Settings no reconnection would cure (a refused password, an untrusted certificate).
      await Promise.all([options.embedded?.close(), store.close(), fallback.close()]);
      throw err;
    }
    if (!connected) {
      options.logger.warn(
        "rate-limit store not reachable yet: starting anyway, applying each limiter's onStoreError",
      );
    } else {
      // Reachable but refusing the script (an ACL without one of its commands, a read-only
      // replica): no reconnection cures it, and /readyz answers 503 with the same reason.
      const readiness = await store.readiness();
      if (!readiness.ready) {
        options.logger.error(
          { reason: readiness.reason },
          "rate-limit store cannot run the limiter's script: not ready, applying each limiter's onStoreError",
        );
      }
    }
    const overrides = new LiveOverrides(sharedOverrides(table.config.store, options.logger), options.logger);
    let state: LiveState;
    try {
      await overrides.configure(table.config.tiers.overrides);
      await overrides.firstRead(table.config.store.redis.connectTimeout);
      state = await LiveState.build(table, { ...options, overrides });
    } catch (err) {
      await Promise.all([options.embedded?.close(), store.close(), fallback.close(), overrides.close()]);
      throw err;
    }
    const gateway = new Gateway(state, store, fallback, { ...options, metrics }, overrides);
    // Heartbeats only while some limiter falls back locally: no store key otherwise.
    // [lease] The heartbeats also size leased slices (a share of the live instances).
    fallback.start(() => usesLocalFallback(gateway.table) || usesLease(gateway.table));
    try {
      await gateway.#listen();
    } catch (err) {
      await gateway.close();
      throw err;
    }
    return gateway;
  }

  get table(): RuleTable {
    return this.#state.current.table;
  }

  get listeners(): readonly BoundListener[] {
    return this.#listeners.bound;
  }

  url(listener?: string): string {
    return this.#listeners.url(listener);
  }

  /** The rate-limit service's address ("host:port", gRPC), when one runs. */
  get rateLimitServiceAddress(): string | undefined {
    return this.#rateLimitServer?.address;
  }

  /** The last rules reload and what it changed: a worker's, read by the primary's operator page. */
  get lastReload(): ReloadRecord | undefined {
    return this.#lastReload;
  }

  /** The admin listener's address (GET /metrics), when one runs. */
  get adminUrl(): string | undefined {
    return this.#listeners.adminUrl;
  }

  /**
   * Replaces the rule table atomically (see LiveState). The pools the new table no longer uses
   * stay open for their grace period: requests holding the old table may still need them.
   */
  async reload(table: RuleTable): Promise<void> {
    await this.overrides.configure(table.config.tiers.overrides);
    const old = await this.#state.reload(table);
    this.metrics.configReload(true);
    this.#lastReload = { at: new Date().toISOString(), changes: diffRules(old.table, table) };
    this.metrics.configApplied(table.limiters.keys(), false);
    this.#retirement.retire(
      retiredPools(old, this.#state.current),
      retirementGraceMs(old.table.config, table.config),
    );
  }

  /** The TLS listeners' certificate fingerprints (SHA-256), by listener name: what new connections get. */
  get certificateFingerprints(): ReadonlyMap<string, string> {
    return new Map([...this.#listeners.secure].map(([name, l]) => [name, l.fingerprint]));
  }

  /** Reads every TLS listener's certificates again (tls/certificate-reload.ts); true when none failed. */
  reloadCertificates(): Promise<boolean> {
    return reloadCertificates(this.#listeners.secure, this.metrics, this.options.logger);
  }

  async #listen(): Promise<void> {
    const { listeners, admin } = this.#state.current.table.config;
    await this.#listeners.openPublic(listeners, (cfg) =>
      // A decision listener never forwards; a proxy listener never answers decisions.
      cfg.mode === 'decision'
        ? createDecisionHandler({
            state: () => this.#state.current,
            store: this.store,
            fallback: this.fallback,
            logger: this.options.logger,
            metrics: this.metrics,
            ietfHeaders: cfg.ietfHeaders,
            onLimited: cfg.onLimited,
          })
        : createRequestHandler({
            state: () => this.#state.current,
            store: this.store,
            fallback: this.fallback,
            logger: this.options.logger,
            metrics: this.metrics,
            protocol: cfg.tls ? 'https' : cfg.protocol,
            ietfHeaders: cfg.ietfHeaders,
            liveStreams: this.#liveStreams,
            admission: this.admission,
            responseBuffers: this.responseBuffers,
          }),
    );
    if (admin && this.options.adminListener !== false) {
      await this.#listeners.openAdmin(admin.host, admin.port, this.metrics.registry, {
        token: admin.token,
        routes: this.#adminRoutes(),
      });
    }
    const rls = this.#state.current.table.config.rateLimitService;
    if (rls) {
      // Loaded only when configured: a gateway without it never loads gRPC.
      const { RateLimitServer } = await import('./rate-limit-server.js');
      this.#rateLimitServer = await RateLimitServer.start(rls, {
        current: () => this.#state.current,
        store: this.store,
        fallback: this.fallback,
        logger: this.options.logger,
        metrics: this.metrics,
      });
    }
  }

  /** The admin API's routes: each feature that the admin listener serves adds its own. */
  #adminRoutes(): AdminRoute[] {
    const operator = {
      metrics: this.metrics,
      store: this.store,
      current: () => this.#state.current,
      lastReload: () => this.#lastReload,
    };
    return [
      ...adminBanRoutes({ store: this.store, current: () => this.#state.current }),
      ...overrideRoutes(this.overrides),
      ...operatorRoutes(operator),
      ...operatorPageRoutes(operator),
    ];
  }

  /** Stops accepting, lets in-flight requests finish for up to the drain timeout, then closes the store. */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    this.#listeners.closeAdmin();
    // Event streams never end by themselves: end them now (their clients reconnect elsewhere).
    this.#liveStreams.endAll();
    const { drainTimeout } = this.#state.current.table.config.shutdown;
    await Promise.all([
      drainServers(this.#listeners.servers, drainTimeout, this.options.logger),
      this.#rateLimitServer?.close(drainTimeout),
    ]);
    await Promise.all([this.#state.close(), this.#retirement.closeAll()]);
    // Last: the embedded services may still have been answering a drained request.
    await Promise.all([
      this.store.close(),
      this.fallback.close(),
      this.options.embedded?.close(),
      this.overrides.close(),
    ]);
  }
}

/** Whether some limiter of the table counts locally when the store fails. */
function usesLocalFallback(table: RuleTable): boolean {
  for (const limiter of table.limiters.values()) if (limiter.onStoreError === 'local') return true;
  return false;
}

/** [lease] Whether some window leases (src/store/leasing-store.ts). */
function usesLease(table: RuleTable): boolean {
  for (const limiter of table.limiters.values()) if (limiter.windows.some((w) => w.lease)) return true;
  return false;
}
