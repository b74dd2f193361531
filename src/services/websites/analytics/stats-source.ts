// The seam between the analytics data (collector, aggregates) and what reads it (the stats API,
// the statistics pages, the e-mail reports). Days are UTC calendar dates, "YYYY-MM-DD".

/** The dimensions aggregated per website, day and value; named as the original stats API names them. */
export const DIMENSIONS = [
  'pages',
  'landing_pages',
  'referrers',
  'search_engines',
  'social_networks',
  'campaigns',
  'countries',
  'languages',
  'browsers',
  'operating_systems',
  'devices',
  'screen_resolutions',
  'events',
] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** Inclusive range of UTC days. */
export interface DayRange {
  readonly from: string;
  readonly to: string;
}

export interface DailyTotals {
  readonly date: string;
  readonly visitors: number;
  readonly pageviews: number;
}

export interface HourlyTotals {
  /** 0–23, UTC. */
  readonly hour: number;
  readonly visitors: number;
  readonly pageviews: number;
}

export interface ValueCount {
  readonly value: string;
  readonly count: number;
}

export interface TopQuery {
  /** Substring match on the value, case-insensitive. */
  readonly search?: string;
  /** max: highest count first (ties by value); min: lowest first. */
  readonly sort: 'max' | 'min';
  readonly limit: number;
  readonly offset: number;
}

export interface TopPage {
  readonly rows: readonly ValueCount[];
  /** How many distinct values match, for pagination. */
  readonly total: number;
  /** The sum of the counts of every matching value, for shares. */
  readonly sum: number;
}

/** A recent visit, kept only for a bounded time: no IP, no cookie, nothing that identifies a person. */
export interface RecentVisit {
  readonly at: string;
  readonly page: string;
  readonly referrer: string | null;
  readonly country: string | null;
  readonly browser: string | null;
  readonly operatingSystem: string | null;
  readonly device: string | null;
  /** The first pageview of a new visitor (else a further page of a visit): realtime counts these as visitors. */
  readonly visitor: boolean;
}

/** The sum of a custom event's values (`pa.track(name, value, unit)`) per unit over a range. */
export interface EventValue {
  readonly name: string;
  readonly unit: string;
  /** How many of the events carried a value. */
  readonly count: number;
  readonly total: number;
}

export interface TopPagesQuery {
  /** Substring match on the value, case-insensitive. */
  readonly search?: string;
  /** The first value's place in the order (highest count first, ties by value). */
  readonly offset: number;
  /** The most values read. */
  readonly limit: number;
  /** Ends the reading early (the client went away). */
  readonly signal: AbortSignal;
}

/** A page of a dimension's values, highest count first, with the totals of every match. */
export interface TopChunk {
  readonly rows: readonly ValueCount[];
  /** How many distinct values match. */
  readonly total: number;
  /** The sum of the counts of every matching value, for shares. */
  readonly sum: number;
}

export interface StatsSource {
  /** One entry per day of the range, zero-filled, in date order. */
  daily(websiteId: number, range: DayRange): readonly DailyTotals[];
  /** 24 entries, zero-filled, summed over the range. */
  hourly(websiteId: number, range: DayRange): readonly HourlyTotals[];
  top(websiteId: number, dimension: Dimension, range: DayRange, query: TopQuery): TopPage;
  /**
   * The same values (sort max) without holding the event loop: read in short slices, a chunk at a
   * time as the reader asks. The first chunk comes even when it has no rows (for the totals).
   */
  topPages(
    websiteId: number,
    dimension: Dimension,
    range: DayRange,
    query: TopPagesQuery,
  ): AsyncGenerator<TopChunk>;
  /** Whether the website has ever recorded a hit (its page shows the tracking snippet until then). */
  hasData(websiteId: number): boolean;
  /** Visits recorded after sinceMs (epoch ms), newest first. */
  recent(websiteId: number, sinceMs: number): readonly RecentVisit[];
  /**
   * Each event name and unit with how many carried a value and their sum over the range, by name
   * then unit; of the given names only, when there are.
   */
  eventValues(websiteId: number, range: DayRange, names?: readonly string[]): readonly EventValue[];
}
