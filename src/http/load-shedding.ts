import type { ServerResponse } from 'node:http';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { sendError } from './responses.js';

/**
 * The event loop's lag: how late the latest tick of a 20ms timer ran. A timer of its own rather
 * than monitorEventLoopDelay's histogram: it is read in the timers phase, before the poll phase
 * hands over the requests that waited during a slow turn, so those very requests see the lag.
 * One per process (the loop is), started at first use, unref'd so it keeps no process alive.
 */
const SAMPLE_MS = 20;
let lagMs = 0;
let sampling = false;

function sample(): void {
  const due = performance.now() + SAMPLE_MS;
  setTimeout(() => {
    lagMs = Math.max(0, performance.now() - due);
    sample();
  }, SAMPLE_MS).unref();
}

/** The latest lag in milliseconds (0 until the first sample). */
export function loopLagMs(): number {
  if (!sampling) {
    sampling = true;
    sample();
  }
  return lagMs;
}

const RETRY_AFTER_SEC = '1';

/**
 * Answers 503 `overloaded` (Retry-After: 1) when the loop runs more than `shedAfterMs` late (0:
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
