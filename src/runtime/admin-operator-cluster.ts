/**
 * The operator page under `workers: N`: the primary serves it, and its figures are the workers'.
 * As prom-client's AggregatorRegistry does for /metrics, the primary asks every worker over the
 * node:cluster channel for its view (GET /v1/operator's JSON), waits a bounded time, and sums what
 * came: decisions, usage buckets, store round trips and errors; the heaviest keys merged (a key's
 * counts and errors summed across workers, then the top TOP_KEYS: each worker's sketch bounds its own
 * error, so the sum's error is bounded by the sum of theirs); the recent refusals interleaved by time.
 */
import cluster, { type Worker } from 'node:cluster';
import { RECENT_REFUSALS, TOP_KEYS } from '../metrics/near-limit.js';
import { sendError } from '../http/responses.js';
import type { AdminRoute } from './admin-api.js';
import {
  operatorView,
  operatorViewRoutes,
  type OperatorOptions,
  type OperatorView,
} from './admin-operator.js';
import { operatorPageRoutes } from './admin-operator-page.js';

const ASK = 'tollgate:operator-view';
const ANSWER = 'tollgate:operator-view-answer';

interface Ask {
  readonly type: typeof ASK;
  readonly id: number;
}
interface Answer {
  readonly type: typeof ANSWER;
  readonly id: number;
  readonly view?: OperatorView;
  readonly error?: string;
}

const isAsk = (m: unknown): m is Ask => typeof m === 'object' && m !== null && (m as Ask).type === ASK;
const isAnswer = (m: unknown): m is Answer =>
  typeof m === 'object' && m !== null && (m as Answer).type === ANSWER;

/** In a worker: answers the primary's asks with this process's view. Returns what stops answering. */
export function answerOperatorViews(options: OperatorOptions): () => void {
  const onMessage = (message: unknown) => {
    if (!isAsk(message)) return;
    operatorView(options).then(
      (view) => process.send?.({ type: ANSWER, id: message.id, view } satisfies Answer),
      (err: Error) => process.send?.({ type: ANSWER, id: message.id, error: err.message } satisfies Answer),
    );
  };
  process.on('message', onMessage);
  return () => process.off('message', onMessage);
}

/** Thrown when no worker answered: the route answers 503. */
export class NoWorkerAnswered extends Error {}

let lastId = 0;

/** In the primary: every live worker's view, summed; the workers that did not answer within `timeoutMs` left out. */
export async function clusterOperatorView(timeoutMs: number): Promise<OperatorView> {
  const workers = Object.values(cluster.workers ?? {}).filter(
    (w): w is Worker => w !== undefined && w.isConnected(),
  );
  const id = ++lastId;
  const views = await new Promise<OperatorView[]>((resolve) => {
    const got: OperatorView[] = [];
    let pending = workers.length;
    const done = () => {
      clearTimeout(timer);
      cluster.off('message', onMessage);
      resolve(got);
    };
    const onMessage = (_worker: Worker, message: unknown) => {
      if (!isAnswer(message) || message.id !== id) return;
      if (message.view) got.push(message.view);
      if (--pending === 0) done();
    };
    const timer = setTimeout(done, timeoutMs);
    cluster.on('message', onMessage);
    for (const w of workers) w.send({ type: ASK, id } satisfies Ask);
    if (pending === 0) done();
  });
  if (views.length === 0) throw new NoWorkerAnswered(`none of ${workers.length} workers answered`);
  return { ...mergeOperatorViews(views), workers: { count: workers.length, answered: views.length } };
}

/** How long the primary waits for the workers' views. */
const WORKER_VIEW_TIMEOUT_MS = 2000;

/** The operator page and its JSON (GET /ui, /v1/operator, /v1/limiters) on the primary: the workers' views, summed. */
export function workersOperatorRoutes(timeoutMs = WORKER_VIEW_TIMEOUT_MS): AdminRoute[] {
  const view = () => clusterOperatorView(timeoutMs);
  // No worker answering (all restarting): 503 in the error shape, not a 500.
  return [...operatorViewRoutes(view), ...operatorPageRoutes(view)].map((route) => ({
    ...route,
    handle: async (req, res, rest) => {
      try {
        await route.handle(req, res, rest);
      } catch (err) {
        if (!(err instanceof NoWorkerAnswered)) throw err;
        sendError(res, 503, 'workers_unavailable', `No worker answered: ${err.message}.`);
      }
    },
  }));
}

type Limiter = OperatorView['limiters'][number];
type Store = OperatorView['store'];

/** The views of several processes as one: counts summed, keys merged, refusals interleaved. Pure. */
export function mergeOperatorViews(views: readonly OperatorView[]): OperatorView {
  const limiters = new Map<string, Limiter>();
  for (const v of views)
    for (const l of v.limiters) {
      const seen = limiters.get(l.name);
      limiters.set(l.name, seen ? mergeLimiter(seen, l) : l);
    }
  const refusals = views
    .flatMap((v) => v.refusals)
    .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))
    .slice(0, RECENT_REFUSALS);
  return {
    now: new Date().toISOString(),
    config: {
      version: mostCommon(views.map((v) => v.config.version)),
      lastReload:
        views
          .map((v) => v.config.lastReload)
          .reduce((a, b) => (b !== null && (a === null || b.at > a.at) ? b : a), null) ?? null,
    },
    store: views.map((v) => v.store).reduce(mergeStore),
    limiters: [...limiters.values()],
    refusals,
  };
}

const add = (a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>) => {
  const out: Record<string, number> = { ...a };
  for (const [k, n] of Object.entries(b)) out[k] = (out[k] ?? 0) + n;
  return out;
};

function mergeLimiter(a: Limiter, b: Limiter): Limiter {
  const windows = a.windows.map((w) => {
    const other = b.windows.find((x) => x.window === w.window);
    if (!other) return w;
    return {
      ...w,
      usage: add(w.usage, other.usage) as typeof w.usage,
      nearLimit: w.nearLimit + other.nearLimit,
    };
  });
  const top = new Map<string, Limiter['top'][number]>();
  for (const k of [...a.top, ...b.top]) {
    const seen = top.get(k.key);
    top.set(k.key, seen ? { ...seen, count: seen.count + k.count, error: seen.error + k.error } : k);
  }
  return {
    ...a,
    decisions: add(a.decisions, b.decisions),
    windows,
    top: [...top.values()]
      .sort((x, y) => y.count - x.count || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0))
      .slice(0, TOP_KEYS),
  };
}

function mergeStore(a: Store, b: Store): Store {
  const buckets = a.latency.buckets.map((bucket) => ({
    le: bucket.le,
    count: bucket.count + (b.latency.buckets.find((x) => x.le === bucket.le)?.count ?? 0),
  }));
  const latency = { buckets, count: a.latency.count + b.latency.count, sum: a.latency.sum + b.latency.sum };
  const errors = a.errors + b.errors;
  // Not ready when any worker's store is not: the first reason given.
  if (!a.ready) return { ...a, errors, latency };
  if (!b.ready) return { ...b, errors, latency };
  return { ...a, errors, latency };
}

function mostCommon(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].sort((x, y) => y[1] - x[1])[0]![0];
}
