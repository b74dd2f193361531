import type { RouteWindow } from '../rules/model.js';
import type { WindowRequest } from '../store/window-store.js';
import { banKeys, windowKey, windowRequest, type PartValues } from './keys.js';

export { windowKey, type PartValues } from './keys.js';

/** Every window of every limiter on a route, keyed for this request, ready for one store round trip. */
export function planWindows(
  windows: readonly RouteWindow[],
  values: PartValues,
  prefix: string,
  nowMs?: number,
): WindowRequest[] {
  return windows.map(({ limiter, index, window }) => {
    const request = window.calendar
      ? windowRequest(limiter, window, windowKey(prefix, limiter, index, values, nowMs), undefined, nowMs)
      : windowRequest(limiter, window, windowKey(prefix, limiter, index, values));
    // An enforcing limiter's penalty box rides on its first window; its other windows follow it.
    const ban = limiter.ban;
    if (ban === undefined || limiter.shadow || index !== 0) return request;
    const keys = banKeys(prefix, limiter.name, values(limiter.tagPart!));
    const span = limiter.windows.length;
    return { ...request, ban: { ...keys, after: ban.after, withinMs: ban.withinMs, forMs: ban.forMs, span } };
  });
}
