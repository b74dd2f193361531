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
}

export interface StatsSource {
  /** One entry per day of the range, zero-filled, in date order. */
  daily(websiteId: number, range: DayRange): readonly DailyTotals[];
  /** 24 entries, zero-filled, summed over the range. */
  hourly(websiteId: number, range: DayRange): readonly HourlyTotals[];
  top(websiteId: number, dimension: Dimension, range: DayRange, query: TopQuery): TopPage;
  /** Visits recorded after sinceMs (epoch ms), newest first. */
  recent(websiteId: number, sinceMs: number): readonly RecentVisit[];
}
