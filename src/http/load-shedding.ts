import type { ServerResponse } from 'node:http';
// Imported, not the global: Node 20's global `performance` is a lazy getter, run on every access.
import { performance } from 'node:perf_hooks';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { sendError } from './responses.js';

/**
 * The event loop's sustained lag, from a 20ms timer of its own. A tick's lateness tells how late
 * the loop ran; when the next tick is overdue right now, by how much tells what a request sees when
 * slow work ran earlier in the same turn. Overload is lag that lasts: the reading is the smaller of
 * the latest tick's lateness and the larger of the tick before and the overdue time, so one slow
 * turn (a GC pause, a burst of start-up work) sheds nothing, and two in a row do. A histogram
 * (monitorEventLoopDelay) only tells the lag after the fact. One per process (the loop is),
 * started at first use, unref'd so it keeps no process alive.
 */
const SAMPLE_MS = 20;
let latestMs = 0;
let previousMs = 0;
let nextDue = 0;

function sample(): void {
  nextDue = performance.now() + SAMPLE_MS;
  setTimeout(() => {
    previousMs = latestMs;
    latestMs = Math.max(0, performance.now() - nextDue);
    sample();
  }, SAMPLE_MS).unref();
}

/** The loop's sustained lag now, in milliseconds (0 until sampling has started). */
export function loopLagMs(): number {
  if (nextDue === 0) sample();
  return Math.min(latestMs, Math.max(previousMs, performance.now() - nextDue));
}

const RETRY_AFTER_SEC = '1';

/**
 * Answers 503 `overloaded` (Retry-After: 1) when the loop keeps running more than `shedAfterMs` late (0:
 * never), before the request is counted or its body read: under overload a cheap refusal beats
 * work that would only arrive too late. Returns whether it answered.
 */
export function shedLoad(
  res: ServerResponse,
  shedAfterMs: number,
  metrics: GatewayMetrics,
  headers: Record<string, string>,
): boolean {
  if (shedAfterMs === 0 || loopLagMs() <= shedAfterMs) return false;
  metrics.shed();
  headers['retry-after'] = RETRY_AFTER_SEC;
  sendError(res, 503, 'overloaded', 'The gateway is overloaded. Please retry shortly.', headers);
  return true;
}
