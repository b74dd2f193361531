// The websites service's URL forms through fastify's inject (buildService, a real SQLite file, an
// in-memory StatsSource): the original's paths as aliases, canonical host case and trailing
// slashes, the pages' HTML 404 for deeper paths, whole time series in the stats API, its range
// bound, and a PATCH that changes nothing leaving updated_at.
import type { FastifyInstance } from 'fastify';
import { test as base, describe, expect } from 'vitest';
import { servicesConfigFrom } from '../../../../src/cli/services-config.js';
import { loadConfigText } from '../../../../src/rules/load.js';
import { userForKey } from '../../../../src/services/accounts/accounts.js';
import { buildService, openServiceDatabase } from '../../../../src/services/registry.js';
import { WebsiteData } from '../../../../src/services/websites/data.js';
import {
  canonicalPageUrl,
  pageRedirect,
  sectionSlug,
} from '../../../../src/services/websites/pages/page-paths.js';
import { DEFAULT_CONFIG } from '../../../helpers/default-config.js';
import { ALICE_KEY, embeddedEnv, newDataDir } from '../../../helpers/embedded.js';
import { silentLogger } from '../../../helpers/gateway.js';
import { MemoryStats } from '../../../helpers/memory-stats.js';
import { untilClockPast } from '../../../helpers/wait.js';

const HOST = 'stats.test';
const RANGE = 'from=2026-11-01&to=2026-11-03';

interface Setup {
  readonly app: FastifyInstance;
  readonly siteId: number;
}

const test = base.extend('setup', { scope: 'file' }, async ({}, { onCleanup }): Promise<Setup> => {
  const config = servicesConfigFrom(
    loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', embeddedEnv(newDataDir())).config,
  );
  const db = openServiceDatabase(config, silentLogger);
  const alice = userForKey(db, ALICE_KEY)!;
  const site = new WebsiteData(db).insert(alice, {
    url: 'public.example',
    privacy: 0,
    passwordHash: null,
    email: 0,
    excludeBots: 1,
    excludeParams: null,
    excludeIps: null,
  })!;
  const stats = new MemoryStats()
    .addDay(site.id, '2026-11-01', 3, 5)
    .addDay(site.id, '2026-11-02', 4, 9)
    .addValue(site.id, 'landing_pages', '2026-11-01', '/', 3);
  const app = await buildService('websites', { db, config, logger: silentLogger, stats });
  onCleanup(async () => {
    await app.close();
    db.close();
  });
  return { app, siteId: site.id };
});

const get = (app: FastifyInstance, url: string) =>
  app.inject({ method: 'GET', url, headers: { host: HOST } });
const api = (app: FastifyInstance, method: 'GET' | 'PATCH', url: string, payload?: string) =>
  app.inject({
    method,
    url,
    headers: {
      host: HOST,
      authorization: `Bearer ${ALICE_KEY}`,
      accept: 'application/json',
      ...(payload === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
    },
    payload,
  });

describe('page URL rules (pure)', () => {
  test('canonical form: domain in lower case, no trailing slash, the query kept', () => {
    expect(canonicalPageUrl('/Public.Example/')).toBe('/public.example');
    expect(canonicalPageUrl('/public.example/pages/?from=2026-11-01')).toBe(
      '/public.example/pages?from=2026-11-01',
    );
    expect(canonicalPageUrl('/PUBLIC.example/Pages')).toBe('/public.example/Pages');
    expect(pageRedirect('/public.example/pages?x=1')).toBeUndefined();
    expect(pageRedirect('/public.example//')).toBe('/public.example');
    expect(sectionSlug('landing_pages.csv')).toEqual({ slug: 'landing-pages', csv: true });
    expect(sectionSlug('landing-pages')).toEqual({ slug: 'landing-pages', csv: false });
  });
});

describe('statistics page URLs', () => {
  test('/{domain}/landing_pages is landing-pages; /{domain}/export/{section} is its CSV', async ({
    setup,
  }) => {
    const dashed = await get(setup.app, `/public.example/landing-pages?${RANGE}`);
    const underscored = await get(setup.app, `/public.example/landing_pages?${RANGE}`);
    expect(dashed.statusCode).toBe(200);
    expect(underscored.statusCode).toBe(200);
    // The same page; only the sign-in link's way back names the path asked for.
    expect(underscored.body).toBe(dashed.body.replace('%2Flanding-pages%3F', '%2Flanding_pages%3F'));

    const csv = await get(setup.app, `/public.example/landing-pages.csv?${RANGE}`);
    for (const path of ['export/landing-pages', 'export/landing_pages', 'export/landing-pages.csv']) {
      const exported = await get(setup.app, `/public.example/${path}?${RANGE}`);
      expect(exported.statusCode, path).toBe(200);
      expect(exported.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(exported.headers['content-disposition']).toBe(
        'attachment; filename="public.example-landing-pages-2026-11-01-2026-11-03.csv"',
      );
      expect(exported.body).toBe(csv.body);
    }
    const overview = await get(setup.app, `/public.example/export/realtime?${RANGE}`);
    expect(overview.statusCode).toBe(400);
    expect(overview.body).toBe('CSV exports are per dimension: /{domain}/{dimension}.csv\n');
  });

  test('a trailing slash and an upper-case host redirect (301) to the canonical URL', async ({ setup }) => {
    const cases: [string, string][] = [
      ['/public.example/', '/public.example'],
      [`/public.example/pages/?${RANGE}`, `/public.example/pages?${RANGE}`],
      ['/Public.Example', '/public.example'],
      [`/PUBLIC.EXAMPLE/referrers?${RANGE}`, `/public.example/referrers?${RANGE}`],
      ['/PUBLIC.EXAMPLE/export/pages', '/public.example/export/pages'],
    ];
    for (const [from, to] of cases) {
      const reply = await get(setup.app, from);
      expect({ from, status: reply.statusCode, location: reply.headers.location }).toEqual({
        from,
        status: 301,
        location: to,
      });
    }
    expect((await get(setup.app, `/public.example/pages?${RANGE}`)).statusCode).toBe(200);
  });

  test("deeper unknown paths get the pages' HTML 404; the API's paths keep their JSON 404", async ({
    setup,
  }) => {
    for (const path of ['/public.example/pages/extra', '/public.example/a/b/c', '/unknown.example/x/y']) {
      const reply = await get(setup.app, path);
      expect(reply.statusCode, path).toBe(404);
      expect(reply.headers['content-type'], path).toBe('text/html; charset=utf-8');
      expect(reply.body).toContain('<h1>Page not found</h1>');
    }
    for (const path of ['/api/v1/nope/deeper', '/js/a/b', '/_/x/y']) {
      const reply = await get(setup.app, path);
      expect(reply.statusCode, path).toBe(404);
      expect(reply.headers['content-type'], path).toMatch(/^application\/json/);
    }
  });
});

describe('the stats API', () => {
  test('a time series is whole by default; per_page still pages it', async ({ setup }) => {
    const url = `/api/v1/stats/${setup.siteId}`;
    const days = await api(setup.app, 'GET', `${url}?name=visitors&from=2026-10-01&to=2026-11-02`);
    expect(days.statusCode).toBe(200);
    const body = days.json() as { data: { value: string }[]; meta: Record<string, unknown> };
    expect(body.data).toHaveLength(33);
    expect(body.data.at(0)).toEqual({ value: '2026-10-01', count: 0 });
    expect(body.data.at(-1)).toEqual({ value: '2026-11-02', count: 4 });
    expect(body.meta).toMatchObject({
      current_page: 1,
      last_page: 1,
      per_page: 33,
      total: 33,
      from: 1,
      to: 33,
    });

    const hours = (await api(setup.app, 'GET', `${url}?name=visitors_hours&${RANGE}`)).json() as {
      data: unknown[];
      meta: Record<string, unknown>;
    };
    expect(hours.data).toHaveLength(24);
    expect(hours.meta).toMatchObject({ last_page: 1, per_page: 24, total: 24 });

    const paged = (
      await api(setup.app, 'GET', `${url}?name=pageviews&from=2026-10-01&to=2026-11-02&per_page=10`)
    ).json() as {
      data: unknown[];
      meta: Record<string, unknown>;
    };
    expect(paged.data).toHaveLength(10);
    expect(paged.meta).toMatchObject({ last_page: 4, per_page: 10, total: 33 });
    // A dimension keeps its default page of 10.
    const top = (await api(setup.app, 'GET', `${url}?name=landing_pages&${RANGE}`)).json() as {
      meta: Record<string, unknown>;
    };
    expect(top.meta).toMatchObject({ per_page: 10, total: 1 });
  });

  test('a range over 367 days is refused, as on the pages', async ({ setup }) => {
    const url = `/api/v1/stats/${setup.siteId}`;
    const ok = await api(setup.app, 'GET', `${url}?name=visitors&from=2025-11-01&to=2026-11-02`);
    expect(ok.statusCode).toBe(200);
    expect((ok.json() as { data: unknown[] }).data).toHaveLength(367);
    const refused = await api(setup.app, 'GET', `${url}?name=visitors&from=2025-10-31&to=2026-11-02`);
    expect({ status: refused.statusCode, body: refused.json() }).toEqual({
      status: 422,
      body: { message: { from: ['The range must not be longer than 367 days.'] }, status: 422 },
    });
  });

  test('PATCH with only url= (never changed) or unchanged values leaves updated_at', async ({ setup }) => {
    const url = `/api/v1/websites/${setup.siteId}`;
    const before = (await api(setup.app, 'GET', url)).json() as { data: { updated_at: string } };
    for (const payload of ['url=public.example', 'url=other.example', 'privacy=0&exclude_bots=1', '']) {
      const reply = await api(setup.app, 'PATCH', url, payload);
      expect(reply.statusCode, payload).toBe(200);
      expect((reply.json() as { data: { updated_at: string } }).data.updated_at, payload).toBe(
        before.data.updated_at,
      );
    }
    // Once the clock has passed the stored time, a changed value moves it.
    await untilClockPast(Date.parse(before.data.updated_at));
    const changed = (await api(setup.app, 'PATCH', url, 'privacy=1')).json() as {
      data: { updated_at: string };
    };
    expect(changed.data.updated_at > before.data.updated_at).toBe(true);
  });
});
