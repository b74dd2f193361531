import fc from 'fast-check';
import { test as base, describe, expect } from 'vitest';
import { openDatabase, type Db } from '../../../../src/db/database.js';
import type { Hit } from '../../../../src/services/websites/analytics/aggregate.js';
import { addDays, dayOf, daysBetween } from '../../../../src/services/websites/analytics/days.js';
import { HitRecorder, RECENT_MS } from '../../../../src/services/websites/analytics/recorder.js';
import { createStatsSource } from '../../../../src/services/websites/analytics/sqlite-stats-source.js';
import {
  DIMENSIONS,
  type Dimension,
  type ValueCount,
} from '../../../../src/services/websites/analytics/stats-source.js';
import { createUser } from '../../../../src/services/accounts/accounts.js';
import { newDataDir } from '../../../helpers/embedded.js';

/** The StatsSource over SQLite against a reference model, for random streams of hits. */

const DAY0 = Date.UTC(2026, 0, 30);
const DAY_MS = 86_400_000;
const DAYS = 4;

/** A fresh database with one owner and two websites; a test's are closed after it. */
const test = base.extend('freshDatabase', ({}, { onCleanup }) => {
  const dbs: Db[] = [];
  onCleanup(() => dbs.forEach((db) => db.close()));
  return (): { db: Db; sites: [number, number] } => {
    const db = openDatabase(newDataDir());
    dbs.push(db);
    const { userId } = createUser(db, 'owner');
    const insert = db.prepare<[number, string, string, string], { id: number }>(
      `INSERT INTO websites (user_id, url, created_at, updated_at) VALUES (?, ?, ?, ?) RETURNING id`,
    );
    const now = new Date().toISOString();
    return {
      db,
      sites: [insert.get(userId, 'a.example', now, now)!.id, insert.get(userId, 'b.example', now, now)!.id],
    };
  };
});

const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });
const word = fc.constantFrom('/', '/a', '/A?x=1', '/b', '/Blog', 'ab', 'AB');

const hitArb: fc.Arbitrary<Hit> = fc.record({
  atMs: fc.integer({ min: DAY0, max: DAY0 + DAYS * DAY_MS - 1 }),
  page: word,
  visitor: fc.boolean(),
  referrer: maybe(fc.constantFrom('google.com', 'x.com', 'other.example')),
  searchEngine: maybe(fc.constantFrom('Google', 'Bing')),
  socialNetwork: maybe(fc.constantFrom('Twitter')),
  campaign: maybe(fc.constantFrom('spring', 'Spring')),
  country: maybe(fc.constantFrom('DE', 'US', 'FR')),
  language: maybe(fc.constantFrom('en', 'de')),
  browser: maybe(fc.constantFrom('Chrome', 'Firefox')),
  operatingSystem: maybe(fc.constantFrom('Linux', 'Windows')),
  device: maybe(fc.constantFrom('desktop', 'mobile')),
  screenResolution: maybe(fc.constantFrom('1920x1080', '390x844')),
  event: maybe(
    fc.record({
      name: fc.constantFrom('signup', 'Buy'),
      value: maybe(fc.integer({ min: 1, max: 1000 })),
      unit: fc.constantFrom('', 'EUR'),
    }),
  ),
});

/** The value a hit gives a dimension, when it counts there (the rules restated). */
function modelValue(hit: Hit, dimension: Dimension): string | null {
  if (dimension === 'events') return hit.event?.name ?? null;
  if (hit.event) return null;
  if (dimension === 'pages') return hit.page;
  if (!hit.visitor) return null;
  const byDimension: Record<Exclude<Dimension, 'events' | 'pages'>, string | null> = {
    landing_pages: hit.page,
    referrers: hit.referrer,
    search_engines: hit.searchEngine,
    social_networks: hit.socialNetwork,
    campaigns: hit.campaign,
    countries: hit.country,
    languages: hit.language,
    browsers: hit.browser,
    operating_systems: hit.operatingSystem,
    devices: hit.device,
    screen_resolutions: hit.screenResolution,
  };
  return byDimension[dimension];
}

const inRange = (hit: Hit, from: string, to: string) => dayOf(hit.atMs) >= from && dayOf(hit.atMs) <= to;

function modelTop(
  hits: readonly Hit[],
  dimension: Dimension,
  from: string,
  to: string,
  search: string | undefined,
  sort: 'max' | 'min',
): ValueCount[] {
  const counts = new Map<string, number>();
  for (const hit of hits) {
    const value = inRange(hit, from, to) ? modelValue(hit, dimension) : null;
    if (value === null) continue;
    if (search !== undefined && !value.toLowerCase().includes(search.toLowerCase())) continue;
    counts.set(value, (counts.get(value) ?? 0) + 1);
  }
  const rows = [...counts].map(([value, count]) => ({ value, count }));
  return rows.sort(
    (a, b) => (sort === 'max' ? b.count - a.count : a.count - b.count) || (a.value < b.value ? -1 : 1),
  );
}

const streams = fc.array(fc.record({ site: fc.integer({ min: 0, max: 1 }), hit: hitArb }), {
  maxLength: 60,
});
const dayIndex = fc.integer({ min: -1, max: DAYS });

describe('the SQLite StatsSource against a model', () => {
  test('daily and hourly totals, and every dimension top with search, sort and paging', ({
    freshDatabase,
  }) => {
    fc.assert(
      fc.property(
        streams,
        dayIndex,
        dayIndex,
        fc.constantFrom(...DIMENSIONS),
        fc.option(fc.constantFrom('a', 'B', 'g', 'spring', 'zzz'), { nil: undefined }),
        fc.constantFrom('max' as const, 'min' as const),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 0, max: 6 }),
        (stream, d1, d2, dimension, search, sort, limit, offset) => {
          const { db, sites } = freshDatabase();
          const recorder = new HitRecorder(db);
          for (const { site, hit } of stream) recorder.record(sites[site]!, hit);
          const source = createStatsSource(db);
          const from = addDays(dayOf(DAY0), Math.min(d1, d2));
          const to = addDays(dayOf(DAY0), Math.max(d1, d2));
          const hits = stream.filter((s) => s.site === 0).map((s) => s.hit);
          const views = hits.filter((h) => !h.event);

          expect(source.daily(sites[0], { from, to })).toEqual(
            daysBetween(from, to).map((date) => ({
              date,
              visitors: views.filter((h) => h.visitor && dayOf(h.atMs) === date).length,
              pageviews: views.filter((h) => dayOf(h.atMs) === date).length,
            })),
          );
          const hour = (h: Hit) => new Date(h.atMs).getUTCHours();
          const ranged = views.filter((h) => inRange(h, from, to));
          expect(source.hourly(sites[0], { from, to })).toEqual(
            Array.from({ length: 24 }, (_, n) => ({
              hour: n,
              visitors: ranged.filter((h) => h.visitor && hour(h) === n).length,
              pageviews: ranged.filter((h) => hour(h) === n).length,
            })),
          );
          const all = modelTop(hits, dimension, from, to, search, sort);
          expect(source.top(sites[0], dimension, { from, to }, { search, sort, limit, offset })).toEqual({
            rows: all.slice(offset, offset + limit),
            total: all.length,
            sum: all.reduce((n, r) => n + r.count, 0),
          });
        },
      ),
      { numRuns: 60 },
    );
  });

  test('recent: pageviews after the given instant, newest first; those older than the window pruned', ({
    freshDatabase,
  }) => {
    fc.assert(
      fc.property(streams, fc.integer({ min: 0, max: DAYS * DAY_MS }), (stream, since) => {
        const { db, sites } = freshDatabase();
        const recorder = new HitRecorder(db);
        // The collector records each hit at its "now": in time order.
        const sorted = [...stream].sort((a, b) => a.hit.atMs - b.hit.atMs);
        for (const { site, hit } of sorted) recorder.record(sites[site]!, hit);
        const sinceMs = DAY0 + since;
        // Each pageview prunes what is older than the window before it.
        const lastView = sorted.filter((s) => !s.hit.event).at(-1)?.hit.atMs ?? 0;
        const kept = sorted
          .filter(({ site, hit }) => site === 0 && !hit.event && hit.atMs > sinceMs)
          .filter(({ hit }) => hit.atMs > lastView - RECENT_MS)
          .reverse();
        const got = createStatsSource(db).recent(sites[0], sinceMs);
        expect(got.map((v) => [v.at, v.page, v.referrer, v.country])).toEqual(
          kept.map(({ hit }) => [new Date(hit.atMs).toISOString(), hit.page, hit.referrer, hit.country]),
        );
      }),
      { numRuns: 40 },
    );
  });
});
