import type { FastifyReply, FastifyRequest } from 'fastify';
import { visitorIp } from '../analytics/visitor-ip.js';
import type { StatsSource } from '../analytics/stats-source.js';
import type { ExportSettings } from '../../config.js';
import { widgetErrors, HttpError } from '../../kit/errors.js';
import { TrustedProxies } from '../../../net/client-ip.js';
import type { WebsiteRow } from '../record.js';
import { csvStream, exportKey } from './csv-export.js';
import { ExportSlots } from './export-slots.js';
import type { Section } from './sections.js';
import type { StatsFrame } from './stats-view.js';

/** The CSV export of every row is bounded all the same. */
const CSV_ROWS = 100_000;
/** Retry-After of a refused export: about the time a usual export takes. */
export const EXPORT_RETRY_AFTER = 5;
export const TOO_MANY_EXPORTS = 'Too many CSV exports at once. Please retry when a download has finished.';

/** How many CSV exports may run at once. */
export interface ExportOptions {
  readonly settings: ExportSettings;
  /** The gateway's trusted proxies: the address a download is counted under is the one it limited. */
  readonly trustedProxies: readonly string[];
  /** The websites' public URL: the tracking snippet's origin on an empty page; none: the request's. */
  readonly publicUrl?: string;
}

/**
 * The statistics pages' CSV download of one section: a slot per client address (bounded at once,
 * 429 past it), released however the download ends.
 */
export function csvDownloads(stats: StatsSource, exports: ExportOptions) {
  const slots = new ExportSlots(exports.settings);
  const trusted = new TrustedProxies(exports.trustedProxies);
  return (
    request: FastifyRequest,
    reply: FastifyReply,
    row: WebsiteRow,
    section: Section | undefined,
    frame: StatsFrame,
    rangeOk: boolean,
    search: string,
  ) => {
    if (!section?.dimension || !rangeOk) {
      return reply
        .status(400)
        .type('text/plain; charset=utf-8')
        .send(
          rangeOk
            ? 'CSV exports are per dimension: /{domain}/{dimension}.csv\n'
            : `${frame.rangeError ?? 'Bad date range.'}\n`,
        );
    }
    const address = visitorIp(request.socket.remoteAddress, request.headers['x-forwarded-for'], trusted);
    const release = slots.acquire(exportKey(address));
    if (!release) {
      return reply
        .status(429)
        .header('retry-after', String(EXPORT_RETRY_AFTER))
        .type('application/json')
        .send(widgetErrors(new HttpError(429, TOO_MANY_EXPORTS, 'too_many_exports')));
    }
    // The slot comes back however the download ends: finished, cut, or the client gone.
    // The socket too: a response queued behind others on a closed socket never gets its 'close'.
    const done = new AbortController();
    const socket = request.raw.socket;
    const end = () => {
      done.abort();
      release();
      socket.off('close', end);
    };
    reply.raw.once('close', end);
    socket.once('close', end);
    const pages = stats.topPages(row.id, section.dimension, frame.range, {
      search,
      offset: 0,
      limit: CSV_ROWS,
      signal: done.signal,
    });
    const valuesOf =
      section.dimension === 'events'
        ? (names: readonly string[]) => stats.eventValues(row.id, frame.range, names)
        : undefined;
    const body = csvStream(pages, exports.settings.stallTimeout, () => reply.raw.destroy(), valuesOf);
    const file = `${frame.domain}-${section.slug}-${frame.range.from}-${frame.range.to}.csv`;
    return reply
      .status(200)
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${file}"`)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-store')
      .send(body);
  };
}
