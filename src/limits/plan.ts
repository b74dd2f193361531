import type { RouteWindow } from '../rules/model.js';
import type { WindowRequest } from '../store/window-store.js';
import { windowKey, windowRequest, type PartValues } from './keys.js';

export { windowKey, type PartValues } from './keys.js';

/** Every window of every limiter on a route, keyed for this request, ready for one store round trip. */
export function planWindows(
  windows: readonly RouteWindow[],
  values: PartValues,
  prefix: string,
): WindowRequest[] {
  return windows.map(({ limiter, index, window }) =>
    windowRequest(limiter, window, windowKey(prefix, limiter, index, values)),
  );
}
