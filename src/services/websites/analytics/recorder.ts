import type { Db } from '../../../db/database.js';
import { dayOf } from './days.js';
import { increments, type Hit } from './aggregate.js';

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
    const bumpKnown = db.prepare<[number, string, string, string]>(
      'UPDATE stats SET count = count + 1 WHERE website_id = ? AND name = ? AND date = ? AND value = ?',
    );
    // Counts the day's values up to the bound only: a scan of the primary key's prefix, never more rows.
    const distinct = db.prepare<[number, string, string, number], { n: number }>(
      `SELECT count(*) AS n FROM (SELECT 1 FROM stats WHERE website_id = ? AND name = ? AND date = ? LIMIT ?)`,
    );
    const bump = db.prepare<[number, string, string, string]>(
      `INSERT INTO stats (website_id, name, date, value, count) VALUES (?, ?, ?, ?, 1)
       ON CONFLICT (website_id, name, date, value) DO UPDATE SET count = count + 1`,
    );
    /** Adds one to the value's row, or to "(other)" when the value is new and the day is full; returns which. */
    const count = (websiteId: number, name: string, date: string, value: string): string => {
      if (bumpKnown.run(websiteId, name, date, value).changes === 1) return value;
      const full = distinct.get(websiteId, name, date, bound)!.n >= bound;
      const counted = full ? OTHER_VALUE : value;
      bump.run(websiteId, name, date, counted);
      return counted;
    };
    const eventValue = db.prepare<[number, string, string, string, number]>(
      `INSERT INTO event_values (website_id, date, name, unit, count, total) VALUES (?, ?, ?, ?, 1, ?)
       ON CONFLICT (website_id, date, name, unit) DO UPDATE SET count = count + 1, total = total + excluded.total`,
    );
    const recent = db.prepare<
      [number, number, string, string | null, string | null, string | null, string | null, string | null]
    >(
      `INSERT INTO recent_visits (website_id, at_ms, page, referrer, country, browser, operating_system, device)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const prune = db.prepare<[number]>('DELETE FROM recent_visits WHERE at_ms <= ?');
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
          eventValue.run(websiteId, dayOf(hit.atMs), eventName ?? hit.event.name, unit, hit.event.value);
        }
        return;
      }
      // The hit's time is the collector's now.
      prune.run(hit.atMs - recentMs);
      recent.run(
        websiteId,
        hit.atMs,
        hit.page,
        hit.referrer,
        hit.country,
        hit.browser,
        hit.operatingSystem,
        hit.device,
      );
    });
  }

  record(websiteId: number, hit: Hit): void {
    this.#record.immediate(websiteId, hit);
  }
}
