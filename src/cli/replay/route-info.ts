/** What a replay simulation (simulate.ts) keeps of each route of its config, made once. */
import type { WindowRequest } from '../../store/window-store.js';
import type { Keyed, RouteKeying } from './client-keys.js';
import type { CompactRoute } from './compact.js';
import type { LimiterStats, RouteStats } from './stats.js';

/** What feed needs of a route. */
export interface RouteInfo {
  /** Its index in the table's routes. */
  readonly index: number;
  readonly routeStats: RouteStats;
  /** Its limiters' statistics, in route order. */
  readonly stats: readonly LimiterStats[];
  readonly keying: RouteKeying;
  readonly lists: boolean;
  readonly bans: boolean;
  /**
   * The route's windows as store requests without their keys, when no window bans or follows the
   * calendar: the store reads these (shared by every client, so in the CPU's caches) and a
   * client's own requests only to find a slot.
   */
  readonly unkeyed: readonly WindowRequest[] | undefined;
  /** The route's windows for the compact lane, when the config takes it. */
  readonly compact: CompactRoute | undefined;
  /** The compact lane's rows of a client found (a route of one limiter: its row kept by ClientKeys.row0). */
  readonly find: (keyed: Keyed) => void;
  readonly oneLimiter: boolean;
}
