import { z } from 'zod';
import {
  describeRoutes,
  laravelError,
  laravelValidationError,
  listPage,
  unauthenticated,
  type OpenApiFragment,
  type SameKeys,
} from '../../kit/openapi.js';
import { pageField } from '../../kit/pagination.js';
import { COLLECTOR_PATHS } from './collector.js';
import {
  DEFAULT_DAYS,
  MAX_RANGE_DAYS,
  REALTIME_MINUTES,
  SERIES_PER_PAGE,
  STAT_NAMES,
  STATS_PER_PAGE,
} from './stats-query.js';
import { STATS_PATHS, type Account, type RealtimeVisit } from './stats-routes.js';

/** The stats and account APIs (API key) and the tracking endpoints (public), in OpenAPI 3.1. */

const valueCount = z
  .object({ value: z.string(), count: z.int().min(0) })
  .meta({ id: 'StatValue', description: 'A value of the dimension (a date, an hour) and its count.' });

const eventValueSum = z.object({ unit: z.string(), count: z.int().min(0), total: z.number() }).meta({
  id: 'EventValueSum',
  description:
    'The values of an event summed per unit over the range: how many carried a value (count) and their sum (total).',
});

const eventCount = z
  .object({ value: z.string(), count: z.int().min(0), values: z.array(eventValueSum) })
  .meta({
    id: 'EventValue',
    description:
      'name=events: an event name, its count, and its values summed per unit ([] when none had a value).',
  });

const realtimeVisit = z
  .object({
    at: z.iso.datetime(),
    page: z.string(),
    referrer: z.string().nullable(),
    country: z.string().nullable(),
    browser: z.string().nullable(),
    operating_system: z.string().nullable(),
    device: z.string().nullable(),
    visitor: z.boolean().meta({
      description: 'The first pageview of a new visitor (false: a further page of a visit).',
    }),
  })
  .meta({
    id: 'RealtimeVisit',
    description: 'A recent visit (name=realtime): when (UTC), the page and what was classified; no IP.',
  });
const _sameVisit: SameKeys<z.output<typeof realtimeVisit>, RealtimeVisit> = true;

const account = z
  .object({ id: z.int(), name: z.string(), email: z.string().nullable(), created_at: z.iso.datetime() })
  .meta({ id: 'Account' });
const _sameFields: SameKeys<z.output<typeof account>, Account> = true;

const date = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

/** The stats query as documentation: parseStatsQuery (stats-query.ts) reads it. */
const statsQuery = z.object({
  name: z.enum(STAT_NAMES as [string, ...string[]]).meta({
    description:
      'A dimension (value counts, largest first by default); visitors or pageviews (one row per day of ' +
      'the range, value = the date, in date order); visitors_hours or pageviews_hours (24 rows, value = ' +
      'the UTC hour "0"–"23", summed over the range); realtime (the visits of the last `minutes`, newest ' +
      'first, as RealtimeVisit rows; from, to, search and sort do not apply). Another name is a 422.',
  }),
  from: date.optional().meta({
    description: `First UTC day (YYYY-MM-DD). Default: ${DEFAULT_DAYS - 1} days before to.`,
  }),
  to: date.optional().meta({
    description: `Last UTC day, at most ${MAX_RANGE_DAYS} days after from. Default: today.`,
  }),
  minutes: z
    .string()
    .optional()
    .meta({
      description: `name=realtime only: how many minutes back, ${REALTIME_MINUTES.min} to ${REALTIME_MINUTES.max} (the default; visits are kept that long). Anything else is a 422.`,
    }),
  search: z.string().max(255).optional().meta({
    description: 'Case-insensitive substring of the value (dimensions only).',
  }),
  sort: z.enum(['max', 'min']).optional().meta({
    description: 'max: largest count first (ties by value); min: smallest first. Anything else reads as max.',
  }),
  per_page: z
    .string()
    .optional()
    .meta({
      description:
        `Rows per page, ${STATS_PER_PAGE.min} to ${STATS_PER_PAGE.max}; anything else reads as ${STATS_PER_PAGE.default}. ` +
        `A time series (visitors, pageviews and their _hours) is whole by default (one page); its per_page may be ` +
        `${SERIES_PER_PAGE.min} to ${SERIES_PER_PAGE.max}.`,
    }),
  page: pageField,
});

const apiErrors = {
  401: { description: 'Missing or unknown API key.', schema: unauthenticated },
  404: { description: 'No such website, or another owner\'s: "Resource not found.".', schema: laravelError },
  422: { description: 'Validation failed: the messages of each field.', schema: laravelValidationError },
};

const statsApi = describeRoutes(
  { tag: 'stats', security: 'apiKey', bodyTypes: ['application/json'], errors: apiErrors },
  [
    {
      method: 'get',
      path: STATS_PATHS.stats,
      summary: "A website's statistics",
      description:
        'Counts of one dimension or series over a range of UTC days, a page at a time; or, with ' +
        'name=realtime, the visits of the last minutes (newest first).',
      params: z.object({ id: z.int().min(1).meta({ description: 'The website id.' }) }),
      query: statsQuery,
      answers: {
        200: {
          description:
            'One page of value counts (with their value sums for name=events; of recent visits for name=realtime).',
          schema: listPage(z.union([valueCount, eventCount, realtimeVisit])),
        },
      },
      errors: [401, 404, 422],
    },
    {
      method: 'get',
      path: STATS_PATHS.account,
      summary: "The API key owner's account",
      answers: {
        200: { description: 'The account.', schema: z.object({ data: account, status: z.literal(200) }) },
      },
      errors: [401],
    },
  ],
);

const collectorBody = z.object({
  page: z
    .string()
    .meta({ description: 'The full URL of the visited page; its host (without www.) names the website.' }),
  referrer: z.string().optional().meta({ description: 'document.referrer. Another site: a new visitor.' }),
  screen_resolution: z.string().optional().meta({ description: 'WIDTHxHEIGHT, e.g. 1920x1080.' }),
  'event[name]': z.string().max(255).optional().meta({
    description: 'A custom event: counted under events, not as a pageview (JSON: event.name).',
  }),
  'event[value]': z
    .string()
    .regex(/^[1-9]\d{0,9}$/)
    .optional()
    .meta({
      description:
        'A positive integer of at most 10 digits, summed per event name and unit (JSON: event.value).',
    }),
  'event[unit]': z.string().max(32).optional().meta({ description: 'JSON: event.unit.' }),
});

const tracking = describeRoutes(
  {
    tag: 'tracking',
    bodyTypes: ['application/x-www-form-urlencoded', 'application/json'],
    errors: {
      403: {
        description:
          'An excluded visit (the website\'s exclude_ips, or a bot with exclude_bots): "This visit is excluded from tracking.".',
        schema: laravelError,
      },
      404: { description: 'No website has the page\'s host: "Resource not found.".', schema: laravelError },
      422: { description: 'A missing or malformed field.', schema: laravelValidationError },
    },
  },
  [
    {
      method: 'post',
      path: COLLECTOR_PATHS.event,
      summary: 'Record a page view or an event',
      description:
        'What the tracking script sends (navigator.sendBeacon). No cookie is read or set, no address is stored.',
      public: true,
      body: collectorBody,
      answers: {
        200: {
          description: 'Recorded.',
          schema: z.object({ message: z.literal('Recorded.'), status: z.literal(200) }),
        },
      },
      errors: [403, 404, 422],
    },
    {
      method: 'get',
      path: COLLECTOR_PATHS.script,
      summary: 'The tracking script',
      description:
        'Plain JavaScript to embed with <script src=".../js/script.js" defer>; data-dnt="true" honours Do-Not-Track. ' +
        'ETag and Cache-Control: public, max-age=3600; 304 to a matching If-None-Match.',
      public: true,
      answers: {
        200: { description: 'The script.', contentType: 'application/javascript' },
        304: { description: 'Not modified.' },
      },
    },
  ],
);

/** These fragments and `others`, as one (each built when first read). */
export function withAnalytics(other: OpenApiFragment): OpenApiFragment {
  const parts = [other, statsApi, tracking];
  return {
    get paths() {
      return Object.assign({}, ...parts.map((p) => p.paths)) as OpenApiFragment['paths'];
    },
    get schemas() {
      return Object.assign({}, ...parts.map((p) => p.schemas ?? {})) as Record<string, unknown>;
    },
  };
}
