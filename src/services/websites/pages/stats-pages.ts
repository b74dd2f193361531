import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../../db/database.js';
import type {
  DayRange,
  Dimension,
  StatsSource,
  TopPage,
  TopPagesQuery,
  ValueCount,
} from '../analytics/stats-source.js';
import type { WebsiteRow } from '../record.js';
import { ownSites, websiteByHost } from '../data.js';
import { PAGE_ROUTE } from '../../pages/assets.js';
import { pageAccess, safeNext, type Guarded } from '../../pages/access.js';
import { csvDownloads, type ExportOptions } from './csv-download.js';
import { notFoundPage, passwordPage, sendPage } from '../../pages/layout.js';
import { pageRedirect, sectionSlug } from './page-paths.js';
import { parseRange } from './range.js';
import { OVERVIEW, REALTIME_WINDOW_MS, sectionFor, SECTIONS } from './sections.js';
import { checkOrigin, type PageSessions } from '../../pages/session.js';
import { dimensionPage, PAGE_SIZE, SEARCH_MAX, websitesListPage, type StatsFrame } from './stats-view.js';
import { overviewPage, waitingPage } from './overview-view.js';
import { isoDay } from './range.js';
import { previousRange } from './periods.js';
import { realtimeCounts, realtimePage } from './realtime-view.js';

/**
 * The statistics pages on the websites host: /{domain} and /{domain}/{section}, the owner's list
 * at /, the password form's POST /_/unlock/{domain}. The API's paths (/api/…, /js/…,
 * /openapi.json) are never a domain: they stay the API's JSON 404.
 */

const RESERVED = new Set(['api', 'js', 'openapi.json', '_', 'websites']);
type PageRequest = FastifyRequest<{
  Params: { domain: string; section?: string };
  Querystring: Record<string, unknown>;
  Body: Record<string, unknown> | undefined;
}>;

const guarded = (row: WebsiteRow): Guarded => ({
  id: row.id,
  userId: row.user_id,
  privacy: row.privacy,
  passwordHash: row.password_hash,
});

const pathAndQuery = (request: FastifyRequest) => request.url;

export function registerStatsPages(
  app: FastifyInstance,
  db: Db,
  stats: StatsSource,
  sessions: PageSessions,
  exports: ExportOptions,
  now: () => number = Date.now,
): void {
  const sendCsv = csvDownloads(stats, exports);

  const notFound = (request: FastifyRequest, reply: FastifyReply, viewer: number | undefined) =>
    sendPage(reply, 404, notFoundPage(viewer !== undefined, pathAndQuery(request)));

  app.get('/', PAGE_ROUTE, async (request, reply) => {
    const viewer = sessions.viewer(request);
    if (viewer === undefined) return reply.redirect('/_/login?next=%2F', 303);
    return sendPage(reply, 200, websitesListPage(ownSites(db, viewer), '/'));
  });

  /** `export`: the CSV of the section, as under /{domain}/export/{section}. */
  const show = async (request: PageRequest, reply: FastifyReply, exported = false) => {
    const { domain } = request.params;
    if (RESERVED.has(domain.toLowerCase())) return reply.callNotFound();
    const canonical = pageRedirect(request.url);
    if (canonical !== undefined) return reply.redirect(canonical, 301);
    const given = request.params.section === undefined ? undefined : sectionSlug(request.params.section);
    const slug = given?.slug;
    const wantsCsv = exported || given?.csv === true || request.query.format === 'csv';
    const section = slug === undefined ? undefined : sectionFor(slug);
    const viewer = sessions.viewer(request);
    const row = websiteByHost(db, domain, viewer ?? -1);
    if (!row || (slug !== undefined && !section)) return notFound(request, reply, viewer);
    const access = pageAccess(guarded(row), viewer, sessions.unlocked(request, 'w', guarded(row)));
    if (access === 'hidden') return notFound(request, reply, viewer);
    if (access === 'password') {
      const action = `/_/unlock/${domain}?next=${encodeURIComponent(pathAndQuery(request))}`;
      return sendPage(reply, 200, passwordPage(domain, action, viewer !== undefined, pathAndQuery(request)));
    }

    const parsed = parseRange(request.query, now());
    const search = section?.dimension ? searchParam(request.query.search) : '';
    const frame: StatsFrame = {
      domain,
      signedIn: viewer !== undefined,
      here: pathAndQuery(request),
      range: parsed.range,
      rangeError: parsed.ok ? undefined : parsed.error,
      section,
      search,
      today: isoDay(now()),
    };
    const status = parsed.ok ? 200 : 400;
    if (wantsCsv) return sendCsv(request, reply, row, section, frame, parsed.ok, search);
    // The tables' values are read in slices (a large site's would hold the event loop); a client
    // that goes away stops the reading.
    const gone = new AbortController();
    reply.raw.once('close', () => gone.abort());
    const top = (dimension: Dimension, query: Omit<TopPagesQuery, 'signal'>) =>
      readTop(stats, row.id, dimension, frame.range, { ...query, signal: gone.signal });
    if (!section) {
      if (!stats.hasData(row.id)) {
        const origin = exports.publicUrl ?? `${request.protocol}://${request.host}`;
        const page = waitingPage(frame, `${origin}/js/script.js`, `/${domain}/realtime?format=json`);
        return sendPage(reply, status, page);
      }
      const tops = [];
      for (const dimension of OVERVIEW) {
        const s = SECTIONS.find((x) => x.dimension === dimension)!;
        const values = await top(dimension, { limit: 10, offset: 0 });
        // The events list only when there are events: most sites have none.
        if (dimension !== 'events' || values.total > 0) {
          tops.push({ dimension, title: s.title, slug: s.slug, top: values });
        }
      }
      if (gone.signal.aborted) return reply;
      const events = tops.find((t) => t.dimension === 'events');
      const data = {
        daily: stats.daily(row.id, frame.range),
        previous: stats.daily(row.id, previousRange(frame.range)),
        hourly: stats.hourly(row.id, frame.range),
        tops,
        eventValues: events
          ? stats.eventValues(
              row.id,
              frame.range,
              events.top.rows.map((r) => r.value),
            )
          : [],
      };
      return sendPage(reply, status, overviewPage(frame, data));
    }
    if (!section.dimension) {
      const visits = stats.recent(row.id, now() - REALTIME_WINDOW_MS);
      const minutes = REALTIME_WINDOW_MS / 60_000;
      // The empty page's wait for the first pageview polls these counts.
      if (request.query.format === 'json') {
        return reply.header('cache-control', 'no-store').send(realtimeCounts(visits, minutes));
      }
      return sendPage(reply, 200, realtimePage(frame, visits, minutes));
    }
    const pageNumber = pageParam(request.query.page);
    const values = await top(section.dimension, {
      search,
      limit: PAGE_SIZE,
      offset: (pageNumber - 1) * PAGE_SIZE,
    });
    if (gone.signal.aborted) return reply;
    const eventValues =
      section.dimension === 'events'
        ? stats.eventValues(
            row.id,
            frame.range,
            values.rows.map((r) => r.value),
          )
        : undefined;
    return sendPage(reply, status, dimensionPage(frame, values, pageNumber, search, eventValues));
  };

  app.get('/:domain', PAGE_ROUTE, (request: PageRequest, reply) => show(request, reply));
  app.get('/:domain/:section', PAGE_ROUTE, (request: PageRequest, reply) => show(request, reply));
  // The original's export paths: the same CSV as /{domain}/{section}.csv.
  app.get('/:domain/export/:section', PAGE_ROUTE, (request: PageRequest, reply) =>
    show(request, reply, true),
  );
  // A trailing slash (/{domain}/, /{domain}/{section}/) goes to its canonical form; any deeper
  // path is the pages' HTML 404 (the API's own paths stay its JSON 404).
  app.get('/:domain/*', PAGE_ROUTE, async (request: PageRequest, reply) => {
    if (RESERVED.has(request.params.domain.toLowerCase())) return reply.callNotFound();
    const canonical = pageRedirect(request.url);
    if (canonical !== undefined) return reply.redirect(canonical, 301);
    return notFound(request, reply, sessions.viewer(request));
  });

  app.post('/_/unlock/:domain', PAGE_ROUTE, async (request: PageRequest, reply) => {
    if (!checkOrigin(request, reply)) return reply;
    const { domain } = request.params;
    const viewer = sessions.viewer(request);
    const row = websiteByHost(db, domain, viewer ?? -1);
    const page = row && guarded(row);
    // Only a password page has a form: anything else is as unknown as a missing site.
    if (!page || pageAccess(page, viewer, false) !== 'password') return notFound(request, reply, viewer);
    const next = safeNext(request.query.next, `/${domain}`);
    const back = next === `/${domain}` || next.startsWith(`/${domain}/`) || next.startsWith(`/${domain}?`);
    const target = back ? next : `/${domain}`;
    const password = request.body?.password;
    if (typeof password !== 'string' || !(await sessions.checkPassword(password, page))) {
      const action = `/_/unlock/${domain}?next=${encodeURIComponent(target)}`;
      return sendPage(
        reply,
        401,
        passwordPage(domain, action, viewer !== undefined, target, 'Wrong password.'),
      );
    }
    sessions.unlock(request, reply, 'w', page, `/${domain}`);
    return reply.redirect(target, 303);
  });
}

/** A table's values, read chunk by chunk. */
async function readTop(
  stats: StatsSource,
  site: number,
  dimension: Dimension,
  range: DayRange,
  query: TopPagesQuery,
): Promise<TopPage> {
  const rows: ValueCount[] = [];
  let total = 0;
  let sum = 0;
  for await (const chunk of stats.topPages(site, dimension, range, query)) {
    rows.push(...chunk.rows);
    total = chunk.total;
    sum = chunk.sum;
  }
  return { rows, total, sum };
}

/** A dimension table's search: a substring of the value; not a string (repeated): none; at most 255. */
function searchParam(value: unknown): string {
  return typeof value === 'string' ? value.trim().slice(0, SEARCH_MAX) : '';
}

/** The table's page: a positive integer, else 1; at most 10⁶ (an empty page). */
function pageParam(value: unknown): number {
  const n = typeof value === 'string' && /^\d{1,7}$/.test(value) ? Number(value) : 1;
  return Math.min(Math.max(n, 1), 1_000_000);
}
