import type { Db } from '../../db/database.js';
import { dayOf } from './days.js';
import { increments, type Hit } from './aggregate.js';

/** How long the realtime view keeps a visit (then it is deleted). */
export const RECENT_MS = 30 * 60_000;

/**
 * Writes hits: one transaction per hit adds its increments to the stats rows, sums an event's
 * value, keeps a pageview in the realtime table and prunes what has aged out of it.
 */
export class HitRecorder {
  readonly #record;

  constructor(db: Db) {
    const bump = db.prepare<[number, string, string, string]>(
      `INSERT INTO stats (website_id, name, date, value, count) VALUES (?, ?, ?, ?, 1)
       ON CONFLICT (website_id, name, date, value) DO UPDATE SET count = count + 1`,
    );
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
      for (const inc of increments(hit)) bump.run(websiteId, inc.name, inc.date, inc.value);
      if (hit.event) {
        if (hit.event.value !== null) {
          eventValue.run(websiteId, dayOf(hit.atMs), hit.event.name, hit.event.unit, hit.event.value);
        }
        return;
      }
      // The hit's time is the collector's now.
      prune.run(hit.atMs - RECENT_MS);
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
