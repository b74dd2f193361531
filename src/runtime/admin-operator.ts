import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { sendJson } from '../http/responses.js';
import { partitionKey } from '../limits/rate-limit-headers.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { periodLabel, USAGE_BUCKETS } from '../metrics/near-limit.js';
import type { CompiledLimiter, RuleTable } from '../rules/compile.js';
import type { RuleDiff } from '../rules/diff.js';
import type { WindowStore } from '../store/window-store.js';
import type { AdminRoute } from './admin-api.js';

/** The last successful reload of the rules: when, and what changed (rules/diff.ts). */
export interface ReloadRecord {
  readonly at: string;
  readonly changes: RuleDiff;
}

export interface OperatorOptions {
  readonly metrics: GatewayMetrics;
  readonly store: Pick<WindowStore, 'readiness'>;
  /** The rule table and key prefix in force (a reload swaps them). */
  readonly current: () => { readonly table: RuleTable; readonly keyPrefix: string };
  readonly lastReload: () => ReloadRecord | undefined;
}

/**
 * What the operator sees of the limiters, live (docs/admin.md#the-operator-page): GET /v1/limiters
 * (decisions, usage per window, heaviest keys), GET /v1/operator (that, plus the store's health
 * and latency, the recent refusals and the config's version and last reload). The page
 * (admin-operator-page.ts) renders the latter. All reads, of this instance only.
 */
export function operatorRoutes(options: OperatorOptions): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/v1/limiters',
      handle: async (_req, res) => send(res, { limiters: await limiters(options) }),
    },
    {
      method: 'GET',
      path: '/v1/operator',
      handle: async (_req, res) => send(res, await operatorView(options)),
    },
  ];
}

const send = (res: ServerResponse, body: unknown) => sendJson(res, 200, JSON.stringify(body));

/** The view of one process; the workers primary adds how many workers it sums (admin-operator-cluster.ts). */
export type OperatorView = Awaited<ReturnType<typeof operatorView>> & {
  readonly workers?: { readonly count: number; readonly answered: number };
};

/** Where the routes read the view: this process's (OperatorOptions), or a function (the workers primary's sum). */
export type OperatorSource = OperatorOptions | (() => Promise<OperatorView>);

export const viewOf = (source: OperatorSource): Promise<OperatorView> =>
  typeof source === 'function' ? source() : operatorView(source);

/** GET /v1/operator and GET /v1/limiters from a view function (the workers primary's). */
export function operatorViewRoutes(view: () => Promise<OperatorView>): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/v1/limiters',
      handle: async (_req, res) => send(res, { limiters: (await view()).limiters }),
    },
    { method: 'GET', path: '/v1/operator', handle: async (_req, res) => send(res, await view()) },
  ];
}

export async function operatorView(options: OperatorOptions) {
  const { table } = options.current();
  const [list, store] = await Promise.all([limiters(options), storeHealth(options)]);
  return {
    now: new Date().toISOString(),
    config: { version: configVersion(table), lastReload: options.lastReload() ?? null },
    store,
    limiters: list,
    // Store keys hold hashed parts only; shown as the RateLimit header's pk, as the top keys are.
    refusals: options.metrics.nearLimit
      .recentRefusals()
      .map((r) => (r.key === undefined ? r : { ...r, key: partitionKey(r.key) })),
  };
}

/** Each limiter of the table in force: its decisions so far, usage per window, heaviest keys. */
async function limiters(options: OperatorOptions) {
  const { table, keyPrefix } = options.current();
  const decisions = await decisionTotals(options.metrics.registry);
  const keyParts = table.config.log.keyParts;
  return [...table.limiters.values()].map((l) => {
    const seen = options.metrics.nearLimit.limiter(l.name);
    const windows = l.windows.map((w) => {
      const label = periodLabel(w.periodMs);
      const usage = seen?.windows.find((s) => s.window === label);
      return {
        window: label,
        limit: w.limit,
        algorithm: w.algorithm,
        usage: usage?.usage ?? Object.fromEntries(USAGE_BUCKETS.map((b) => [b, 0])),
        nearLimit: usage?.nearLimit ?? 0,
      };
    });
    const top = (seen?.top ?? []).map((h) => ({
      key: partitionKey(h.key),
      count: h.count,
      error: h.error,
      ...(keyParts ? { parts: keyPartsOf(l, keyPrefix, h.key) } : {}),
    }));
    return {
      name: l.name,
      shadow: l.shadow,
      decisions: decisions.get(l.name) ?? {},
      windows,
      top,
      // Why no key parts: they are shown only where the access log would show them.
      ...(keyParts ? {} : { keyParts: 'hidden: log.keyParts is off' }),
    };
  });
}

/** tollgate_requests_total by limiter and decision (read as a scrape would; flushes the cells). */
async function decisionTotals(registry: Registry): Promise<Map<string, Record<string, number>>> {
  const totals = new Map<string, Record<string, number>>();
  const metric = registry.getSingleMetric('tollgate_requests_total');
  if (!metric) return totals;
  for (const v of (await metric.get()).values) {
    const limiter = String(v.labels['limiter']);
    let row = totals.get(limiter);
    if (!row) totals.set(limiter, (row = {}));
    row[String(v.labels['decision'])] = v.value;
  }
  return totals;
}

/** A top key's hashed parts, by part name, as the access log's keys (log.keyParts) show them. */
export function keyPartsOf(
  limiter: CompiledLimiter,
  prefix: string,
  storeKey: string,
): Record<string, string> {
  const w = limiter.windows[0]!;
  const parts: Record<string, string> = {};
  const rest = storeKey.slice(prefix.length);
  const close = rest.indexOf('}');
  if (!rest.startsWith('{') || close < 0) return parts;
  if (limiter.tagPart) parts[limiter.tagPart] = rest.slice(1, close);
  let tail = rest.slice(close + 1);
  if (!tail.startsWith(w.keyStem)) return parts;
  tail = tail.slice(w.keyStem.length).split('@', 1)[0]!;
  const values = tail.split(':').slice(1);
  w.otherParts.forEach((part, i) => {
    if (values[i] !== undefined) parts[part] = values[i]!;
  });
  return parts;
}

/** The store's readiness, its round-trip histogram and errors (tollgate_store_*). */
async function storeHealth(options: OperatorOptions) {
  const readiness = await options.store
    .readiness()
    .catch((err: Error) => ({ ready: false, reason: err.message }));
  const registry = options.metrics.registry;
  const latency = { buckets: [] as { le: number | '+Inf'; count: number }[], count: 0, sum: 0 };
  const histogram = registry.getSingleMetric('tollgate_store_duration_seconds');
  // BucketHistogram's samples name their series (metricName), as prom-client's histograms do.
  const values = (histogram ? (await histogram.get()).values : []) as readonly {
    readonly value: number;
    readonly labels: Partial<Record<string, string | number>>;
    readonly metricName?: string;
  }[];
  for (const v of values) {
    if (v.metricName?.endsWith('_bucket'))
      latency.buckets.push({ le: v.labels['le'] as number | '+Inf', count: v.value });
    else if (v.metricName?.endsWith('_sum')) latency.sum = v.value;
    else if (v.metricName?.endsWith('_count')) latency.count = v.value;
  }
  const errors = registry.getSingleMetric('tollgate_store_errors_total');
  const errorCount = errors ? ((await errors.get()).values[0]?.value ?? 0) : 0;
  return { ...readiness, errors: errorCount, latency };
}

const versions = new WeakMap<RuleTable, string>();

/** The config's version: a digest of the config in force (the same config, the same version). */
export function configVersion(table: RuleTable): string {
  let v = versions.get(table);
  if (v === undefined) {
    v = createHash('sha256').update(JSON.stringify(table.config)).digest('hex').slice(0, 12);
    versions.set(table, v);
  }
  return v;
}
