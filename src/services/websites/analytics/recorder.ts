import type { Db } from '../../../db/database.js';
import { dayOf } from './days.js';
import { increments, type Hit } from './aggregate.js';
import { addEventValue } from './tables/event-values.js';
import { insertRecentVisit, pruneRecentVisits } from './tables/recent-visits.js';
import { bump, bumpExisting, distinctValuesUpTo } from './tables/stats.js';

/** How long the realtime view keeps a visit (then it is deleted). */
export const RECENT_MS = 30 * 60_000;

/** The value past a dimension's bound of distinct values on one day counts under. */
export const OTHER_VALUE = '(other)';

/** Distinct values a website keeps per dimension and day unless configured. */
export const DEFAULT_MAX_DISTINCT_VALUES = 1000;

export interface RecorderOptions {
  /**
   * Distinct values stored per website, dimension and UTC day; a new value past it counts under
   * "(other)". Beacons are public: without a bound, each one could add a row (about 1.3 KB) forever.
   */
  readonly maxDistinctValues?: number;
  /** How long a pageview stays in the realtime table. */
  readonly recentMs?: number;
}

/**
 * Writes hits: one transaction per hit adds its increments to the stats rows, sums an event's
 * value, keeps a pageview in the realtime table and prunes what has aged out of it.
 */
export class HitRecorder {
  readonly #record;

  constructor(db: Db, options: RecorderOptions = {}) {
    const bound = options.maxDistinctValues ?? DEFAULT_MAX_DISTINCT_VALUES;
    const recentMs = options.recentMs ?? RECENT_MS;
    /** Adds one to the value's row, or to "(other)" when the value is new and the day is full; returns which. */
    const count = (websiteId: number, name: string, date: string, value: string): string => {
      if (bumpExisting(db, websiteId, name, date, value)) return value;
      const full = distinctValuesUpTo(db, websiteId, name, date, bound) >= bound;
      const counted = full ? OTHER_VALUE : value;
      bump(db, websiteId, name, date, counted);
      return counted;
    };
    this.#record = db.transaction((websiteId: number, hit: Hit) => {
      let eventName: string | undefined;
      for (const inc of increments(hit)) {
        const counted = count(websiteId, inc.name, inc.date, inc.value);
        if (inc.name === 'events') eventName = counted;
      }
      if (hit.event) {
        if (hit.event.value !== null) {
          // An event counted under "(other)" sums its value there too, and its unit with it.
          const unit = eventName === OTHER_VALUE ? '' : hit.event.unit;
          addEventValue(db, websiteId, dayOf(hit.atMs), eventName ?? hit.event.name, unit, hit.event.value);
        }
        return;
      }
      // The hit's time is the collector's now.
      pruneRecentVisits(db, hit.atMs - recentMs);
      insertRecentVisit(db, websiteId, {
        at_ms: hit.atMs,
        page: hit.page,
        referrer: hit.referrer,
        country: hit.country,
        browser: hit.browser,
        operating_system: hit.operatingSystem,
        device: hit.device,
        visitor: hit.visitor ? 1 : 0,
      });
    });
  }

  record(websiteId: number, hit: Hit): void {
    this.#record.immediate(websiteId, hit);
  }
}
