import type { RouteWindow } from '../rules/model.js';
import type { WindowRequest } from '../store/window-store.js';
import { windowKey, windowRequest, type PartValues } from './keys.js';

export { windowKey, type PartValues } from './keys.js';

/** Every window of every limiter on a route, keyed for this request, ready for one store round trip. */
export function planWindows(
  windows: readonly RouteWindow[],
  values: PartValues,
  prefix: string,
  nowMs?: number,
): WindowRequest[] {
  return windows.map(({ limiter, index, window }) =>
    window.calendar
      ? windowRequest(limiter, window, windowKey(prefix, limiter, index, values, nowMs), undefined, nowMs)
      : windowRequest(limiter, window, windowKey(prefix, limiter, index, values)),
  );
}
