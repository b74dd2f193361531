import type { CompiledLimiter, RouteWindow } from '../rules/model.js';
import type { WindowResult } from '../store/window-store.js';
import { retryAfterSeconds } from './decision.js';
import type { Refusal } from './refusal.js';

/** A request refused by a ban: the limiter whose ban ends last, and when. */
export interface BanVerdict {
  readonly limiter: CompiledLimiter;
  readonly untilMs: number;
  readonly retryAfterSec: number;
}

/** The ban that refused the request (the store counted none of its windows); undefined when none did. */
export function bannedBy(
  windows: readonly RouteWindow[],
  results: readonly WindowResult[],
  nowMs: number,
): BanVerdict | undefined {
  let found: { limiter: CompiledLimiter; untilMs: number } | undefined;
  for (let i = 0; i < results.length; i++) {
    const until = results[i]!.bannedUntilMs;
    if (until !== undefined && (!found || until > found.untilMs))
      found = { limiter: windows[i]!.limiter, untilMs: until };
  }
  return found && { ...found, retryAfterSec: retryAfterSeconds(found.untilMs, nowMs) };
}

/** The limiters whose ban this request's refusal started (for the log). */
export function bansStarted(windows: readonly RouteWindow[], results: readonly WindowResult[]): string[] {
  const names: string[] = [];
  for (let i = 0; i < results.length; i++) if (results[i]!.banStarted) names.push(windows[i]!.limiter.name);
  return names;
}

/** The 429 of a ban, in the gateway's error shape; Retry-After is the ban's end. */
export const bannedRefusal = (retryAfterSec: number): Refusal => ({
  status: 429,
  code: 'banned',
  decision: 'banned',
  message: 'Too many requests were refused: this client is banned for a while.',
  retryAfterSec,
});
