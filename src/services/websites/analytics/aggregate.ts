import { dayOf } from './days.js';
import type { Dimension } from './stats-source.js';
import { TOTALS } from './sqlite-stats-source.js';

/**
 * What one accepted hit counts, as phpAnalytics counts it: pure, so the property test checks the
 * stored aggregates against a model built from these same rules.
 */

/** A custom event (`pa.track`): its name, an optional positive integer value and its unit. */
export interface TrackedEvent {
  readonly name: string;
  readonly value: number | null;
  readonly unit: string;
}

/** One accepted hit, already classified (see classify.ts). */
export interface Hit {
  readonly atMs: number;
  /** Path and kept query, at most 255 characters. */
  readonly page: string;
  /** The referrer is not this site: a new visitor, and its page a landing page. */
  readonly visitor: boolean;
  /** The referrer's host (without "www."), when it is another site. */
  readonly referrer: string | null;
  readonly searchEngine: string | null;
  readonly socialNetwork: string | null;
  readonly campaign: string | null;
  readonly country: string | null;
  readonly language: string | null;
  readonly browser: string | null;
  readonly operatingSystem: string | null;
  readonly device: string | null;
  readonly screenResolution: string | null;
  /** A custom event: counted as an event only, not as a pageview. */
  readonly event: TrackedEvent | null;
}

/** One +1 on a (name, day, value) row of the stats table. */
export interface Increment {
  readonly name: Dimension | (typeof TOTALS)[keyof typeof TOTALS];
  readonly date: string;
  readonly value: string;
}

/** The rows a hit adds one to. */
export function increments(hit: Hit): Increment[] {
  const date = dayOf(hit.atMs);
  const hour = String(new Date(hit.atMs).getUTCHours());
  const out: Increment[] = [];
  const add = (name: Increment['name'], value: string | null) => {
    if (value !== null && value !== '') out.push({ name, date, value });
  };
  if (hit.event) {
    add('events', hit.event.name);
    return out;
  }
  add(TOTALS.pageviews, date);
  add(TOTALS.pageviewsHours, hour);
  add('pages', hit.page);
  if (!hit.visitor) return out;
  add(TOTALS.visitors, date);
  add(TOTALS.visitorsHours, hour);
  add('landing_pages', hit.page);
  add('referrers', hit.referrer);
  add('search_engines', hit.searchEngine);
  add('social_networks', hit.socialNetwork);
  add('campaigns', hit.campaign);
  add('countries', hit.country);
  add('languages', hit.language);
  add('browsers', hit.browser);
  add('operating_systems', hit.operatingSystem);
  add('devices', hit.device);
  add('screen_resolutions', hit.screenResolution);
  return out;
}
