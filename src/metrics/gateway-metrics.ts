import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { BucketHistogram, CountingCounter, type CounterCell, type HistogramCell } from './cells.js';
import { NearLimit } from './near-limit.js';
import type { LimiterDecision, UpstreamResult } from './outcomes.js';

/**
 * The gateway's Prometheus metrics, in a registry of its own (so several gateways can share a
 * process, and node:cluster workers can be aggregated). Labels come from limiter, route and
 * upstream names only, never from keys. Per request, cached cells are incremented in place (see
 * cells.ts): no label hashing or validation per request; prom-client reads them when scraped.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  /** How close keys are to their limits, the heaviest keys, the recent refusals (near-limit.ts). */
  readonly nearLimit = new NearLimit(this.registry);
  readonly #requests: CountingCounter;
  readonly #storeLatency: HistogramCell;
  readonly #storeErrors: Counter;
  readonly #uncounted: Counter;
  readonly #shed: Counter;
  readonly #upstream: CountingCounter;
  readonly #upstreamLatency: BucketHistogram;
  readonly #reloads: Counter<'result'>;
  readonly #fallbackActive: Gauge;
  readonly #liveInstances: Gauge;
  readonly #localDecisions: Counter<'limiter' | 'decision'>;
  readonly #requestCells = new Children<CounterCell>();
  readonly #upstreamCells = new Children<CounterCell>();
  readonly #latencyCells = new Children<HistogramCell>();
  readonly #responses: CountingCounter;
  readonly #requestDuration: BucketHistogram;
  /** Response cells by route name, then status: no label string is built per response. */
  readonly #responseCells = new Map<string, Map<number, CounterCell>>();
  readonly #durationCells = new Map<string, HistogramCell>();
  readonly #reloadSuccess: Gauge;
  readonly #reloadTime: Gauge;
  readonly #overLimit: Counter<'limiter'>;
  /** Requests whose response has not closed yet (tollgate_open_requests). */
  #open = 0;

  constructor(options: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.#requests = new CountingCounter({
      name: 'tollgate_requests_total',
      help: 'Requests seen by each limiter, by decision.',
      labelNames: ['limiter', 'decision'],
      registers,
    });
    this.#storeLatency = new BucketHistogram(
      'tollgate_store_duration_seconds',
      'Time of one rate-limit store round trip (all windows of a request).',
      [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
      false,
      registers,
    ).unlabelled;
    this.#storeErrors = new Counter({
      name: 'tollgate_store_errors_total',
      help: 'Rate-limit store round trips that failed or timed out.',
      registers,
    });
    this.#uncounted = new Counter({
      name: 'tollgate_store_uncounted_total',
      help: 'Requests let through without being counted: the store failed and their limiters fail open.',
      registers,
    });
    this.#shed = new Counter({
      name: 'tollgate_shed_requests_total',
      help: 'Requests answered 503 overloaded, uncounted, while the event loop lagged past requests.shedAfter.',
      registers,
    });
    this.#upstream = new CountingCounter({
      name: 'tollgate_upstream_responses_total',
      help: 'Forwarded requests by route, upstream and result (status class, unreachable, timeout, aborted).',
      labelNames: ['route', 'upstream', 'result'],
      registers,
    });
    this.#upstreamLatency = new BucketHistogram(
      'tollgate_upstream_duration_seconds',
      'Time from forwarding a request to the end of the upstream response.',
      [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      true,
      registers,
    );
    this.#reloads = new Counter({
      name: 'tollgate_config_reloads_total',
      help: 'Configuration reloads, by result (success or failure).',
      labelNames: ['result'],
      registers,
    });
    this.#fallbackActive = new Gauge({
      name: 'tollgate_store_fallback_active',
      help: '1 while the store is lost and onStoreError: local limiters count in this process, else 0.',
      aggregator: 'max', // workers: 1 when any of them is local
      registers,
    });
    this.#liveInstances = new Gauge({
      name: 'tollgate_store_live_instances',
      help: 'Live gateway instances last learnt from the store heartbeats (1 when never learnt).',
      aggregator: 'max', // workers: each one learns the same count
      registers,
    });
    this.#localDecisions = new Counter({
      name: 'tollgate_local_decisions_total',
      help: 'Requests decided in process while the store was lost (onStoreError: local), by limiter and decision.',
      labelNames: ['limiter', 'decision'],
      registers,
    });
    this.#responses = new CountingCounter({
      name: 'tollgate_responses_total',
      help: 'Every answer of the public and decision listeners, by route ("" when unrouted) and status (499: the client left first).',
      labelNames: ['route', 'status'],
      registers,
    });
    this.#requestDuration = new BucketHistogram(
      'tollgate_request_duration_seconds',
      'Time from the start of handling a request to the close of its response, by route ("" when unrouted).',
      [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      true,
      registers,
    );
    const open = () => this.#open;
    new Gauge({
      name: 'tollgate_open_requests',
      help: 'Requests of the public and decision listeners whose response has not closed yet.',
      registers,
      collect() {
        this.set(open());
      },
    });
    this.#reloadSuccess = new Gauge({
      name: 'tollgate_config_last_reload_success',
      help: '1 when the last config (or certificate) load succeeded, 0 when it failed and the running config stayed.',
      aggregator: 'min', // workers: 0 when any of them failed
      registers,
    });
    this.#reloadTime = new Gauge({
      name: 'tollgate_config_last_reload_timestamp_seconds',
      help: 'When the last config load (the first at start, or a reload) was attempted, in Unix seconds.',
      aggregator: 'max',
      registers,
    });
    this.#overLimit = new Counter({
      name: 'tollgate_admitted_over_limit_total',
      help:
        'Self-audit: requests let through that a limiter did not hold to its limit: admitted uncounted after a ' +
        'store failure (onStoreError: open), or charged after the response into a window already spent. 0 in normal operation.',
      labelNames: ['limiter'],
      registers,
    });
    this.#reloads.inc({ result: 'success' }, 0);
    this.#reloads.inc({ result: 'failure' }, 0);
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** `tollgate_in_flight`: the admission slots held now (requests per IP, event streams), read when scraped. */
  inFlightFrom(read: () => { readonly requests: number; readonly streams: number }): void {
    new Gauge({
      name: 'tollgate_in_flight',
      help: 'Admission slots held now: ordinary requests (per-IP bound) and event streams.',
      labelNames: ['kind'],
      registers: [this.registry],
      collect() {
        const held = read();
        this.set({ kind: 'requests' }, held.requests);
        this.set({ kind: 'streams' }, held.streams);
      },
    });
  }

  // The cell makers are made once: a closure per call would be an allocation per request.
  readonly #newRequestCell = (limiter: string, decision: string) =>
    this.#requests.cell({ limiter, decision });
  readonly #newUpstreamCell = (route: string, upstream: string, result: string) =>
    this.#upstream.cell({ route, upstream, result });
  readonly #newLatencyCell = (route: string, upstream: string) =>
    this.#upstreamLatency.cell({ route, upstream });

  limiterDecision(limiter: string, decision: LimiterDecision): void {
    this.#requestCells.get(limiter, decision, '', this.#newRequestCell).pending++;
  }

  storeRoundTrip(seconds: number): void {
    this.#storeLatency.observe(seconds);
  }

  storeError(): void {
    this.#storeErrors.inc();
  }

  /** A request let through uncounted (onStoreError: open after a store failure). */
  uncounted(): void {
    this.#uncounted.inc();
  }

  /** Limiting is local (the store lost) or back in the store (LocalFallbackObserver). */
  fallbackActive(active: boolean): void {
    this.#fallbackActive.set(active ? 1 : 0);
  }

  liveInstances(instances: number): void {
    this.#liveInstances.set(instances);
  }

  /** A limiter's verdict on a request counted in process (onStoreError: local). */
  localDecision(limiter: string, decision: 'allowed' | 'limited' | 'shadow_limited'): void {
    this.#localDecisions.inc({ limiter, decision });
  }

  shed(): void {
    this.#shed.inc();
  }

  upstream(route: string, upstream: string, result: UpstreamResult, seconds: number): void {
    this.#upstreamCells.get(route, upstream, result, this.#newUpstreamCell).pending++;
    if (result === 'aborted') return;
    this.#latencyCells.get(route, upstream, '', this.#newLatencyCell).observe(seconds);
  }

  /** A reload (of the config or the certificates), and the last-reload gauges. */
  configReload(ok: boolean): void {
    this.#reloads.inc({ result: ok ? 'success' : 'failure' });
    this.#lastLoad(ok);
  }

  /**
   * A config is in force (at start, and after each successful reload): its limiters' self-audit
   * series exist from now on, at 0. Not a reload: tollgate_config_reloads_total is unchanged.
   */
  configApplied(limiters: Iterable<string>, atStart: boolean): void {
    for (const limiter of limiters) this.#overLimit.inc({ limiter }, 0);
    if (atStart) this.#lastLoad(true);
  }

  #lastLoad(ok: boolean): void {
    this.#reloadSuccess.set(ok ? 1 : 0);
    this.#reloadTime.set(Date.now() / 1000);
  }

  /** A request let through beyond its limiter's limit (see tollgate_admitted_over_limit_total). */
  admittedOverLimit(limiter: string): void {
    this.#overLimit.inc({ limiter });
  }

  /** A request's response began to be handled: open until `response` counts its close. */
  opened(): void {
    this.#open++;
  }

  /** A response closed: counted by route and status, its time since `opened` observed. */
  response(route: string, status: number, seconds: number): void {
    this.#open--;
    let byStatus = this.#responseCells.get(route);
    if (!byStatus) this.#responseCells.set(route, (byStatus = new Map()));
    let cell = byStatus.get(status);
    if (!cell) byStatus.set(status, (cell = this.#responses.cell({ route, status: String(status) })));
    cell.pending++;
    let duration = this.#durationCells.get(route);
    if (!duration) this.#durationCells.set(route, (duration = this.#requestDuration.cell({ route })));
    duration.observe(seconds);
  }
}

/** Label children by label values, in nested maps: no key string is built per request. */
class Children<T> {
  readonly #root = new Map<string, Map<string, Map<string, T>>>();

  get(a: string, b: string, c: string, make: (a: string, b: string, c: string) => T): T {
    let level1 = this.#root.get(a);
    if (!level1) this.#root.set(a, (level1 = new Map()));
    let level2 = level1.get(b);
    if (!level2) level1.set(b, (level2 = new Map()));
    let child = level2.get(c);
    if (!child) level2.set(c, (child = make(a, b, c)));
    return child;
  }
}
