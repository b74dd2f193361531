import { DIMENSIONS, type Dimension } from '../analytics/stats-source.js';

/** The sub-pages of a statistics page, by their path segment. */

export interface Section {
  readonly slug: string;
  readonly title: string;
  /** undefined: the realtime page. */
  readonly dimension?: Dimension;
}

const TITLES: Record<Dimension, string> = {
  pages: 'Pages',
  landing_pages: 'Landing pages',
  referrers: 'Referrers',
  search_engines: 'Search engines',
  social_networks: 'Social networks',
  campaigns: 'Campaigns',
  countries: 'Countries',
  languages: 'Languages',
  browsers: 'Browsers',
  operating_systems: 'Operating systems',
  devices: 'Devices',
  screen_resolutions: 'Screen resolutions',
  events: 'Events',
};

/** What a dimension's values are, for its table's first column. */
export const VALUE_HEADINGS: Record<Dimension, string> = {
  pages: 'Page',
  landing_pages: 'Landing page',
  referrers: 'Referrer',
  search_engines: 'Search engine',
  social_networks: 'Social network',
  campaigns: 'Campaign',
  countries: 'Country',
  languages: 'Language',
  browsers: 'Browser',
  operating_systems: 'Operating system',
  devices: 'Device',
  screen_resolutions: 'Screen resolution',
  events: 'Event',
};

export const REALTIME: Section = { slug: 'realtime', title: 'Realtime' };

export const SECTIONS: readonly Section[] = [
  REALTIME,
  ...DIMENSIONS.map((dimension) => ({
    slug: dimension.replace(/_/g, '-'),
    title: TITLES[dimension],
    dimension,
  })),
];

const BY_SLUG = new Map(SECTIONS.map((s) => [s.slug, s]));

export function sectionFor(slug: string): Section | undefined {
  return BY_SLUG.get(slug);
}

/** The dimensions the overview shows the top of. */
export const OVERVIEW: readonly Dimension[] = [
  'pages',
  'referrers',
  'countries',
  'browsers',
  'operating_systems',
  'devices',
  'events',
];

/** How long the realtime page looks back. */
export const REALTIME_WINDOW_MS = 30 * 60_000;
