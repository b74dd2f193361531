import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../../../db/database.js';
import { TrustedProxies } from '../../../net/client-ip.js';
import { HttpError, NOT_FOUND, type FieldErrors } from '../../kit/errors.js';
import type { TrackedEvent } from './aggregate.js';
import { classify, siteHost } from './classify.js';
import { visitorIp } from './visitor-ip.js';
import { countryOf } from './geo.js';
import { HitRecorder, type RecorderOptions } from './recorder.js';
import { notModified, TRACKING_SCRIPT, TRACKING_SCRIPT_ETAG } from './tracking-script.js';
import { trackedWebsite } from '../data.js';

export const COLLECTOR_PATHS = { event: '/api/event', script: '/js/script.js' } as const;

/** The longest page URL accepted (browsers send far shorter ones). */
const MAX_URL = 8192;

/** Reads a field the form sends flat ("event[name]") and JSON nested ({"event":{"name"}}). */
function field(body: Record<string, unknown>, name: string, sub?: string): unknown {
  if (sub === undefined) return body[name];
  const nested = body[name];
  if (nested !== null && typeof nested === 'object' && !Array.isArray(nested)) {
    return (nested as Record<string, unknown>)[sub];
  }
  return body[`${name}[${sub}]`];
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;

/** The collector's fields, or the 422 of the first problems (the Laravel validation shape). */
export function parseCollectorBody(raw: unknown): {
  page: URL;
  referrer: string | undefined;
  screenResolution: string | undefined;
  event: TrackedEvent | null;
} {
  const body = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  const errors: FieldErrors = {};
  const pageText = text(field(body, 'page'));
  let page: URL | undefined;
  if (!pageText) errors.page = ['The page field is required.'];
  else {
    try {
      page = pageText.length <= MAX_URL ? new URL(pageText) : undefined;
    } catch {
      page = undefined;
    }
    if (!page || (page.protocol !== 'http:' && page.protocol !== 'https:')) {
      errors.page = ['The page must be a valid URL.'];
    }
  }
  let event: TrackedEvent | null = null;
  const name = text(field(body, 'event', 'name'));
  const value = text(field(body, 'event', 'value'));
  const unit = text(field(body, 'event', 'unit'));
  if (name !== undefined || value || unit) {
    if (!name) errors['event.name'] = ['The event.name field is required.'];
    else if (name.length > 255)
      errors['event.name'] = ['The event.name field must not be greater than 255 characters.'];
    if (value && !/^[1-9]\d{0,9}$/.test(value)) {
      errors['event.value'] = ['The event.value field must be a positive integer of at most 10 digits.'];
    }
    if (unit && unit.length > 32) {
      errors['event.unit'] = ['The event.unit field must not be greater than 32 characters.'];
    }
    event = { name: name ?? '', value: value ? Number(value) : null, unit: unit ?? '' };
  }
  if (Object.keys(errors).length > 0) throw HttpError.validation(errors);
  return {
    page: page!,
    referrer: text(field(body, 'referrer')),
    screenResolution: text(field(body, 'screen_resolution')),
    event,
  };
}

/**
 * The tracking endpoints, public (no API key): the collector and the script. A visit is matched to
 * the website whose host is the page's (without "www."); when owners share a host, the oldest.
 */
export function registerCollector(
  app: FastifyInstance,
  db: Db,
  trustedProxies: readonly string[],
  options: RecorderOptions = {},
  now: () => number = Date.now,
): void {
  const recorder = new HitRecorder(db, options);
  // Parsed once: the gateway's loader has already refused a malformed range.
  const trusted = new TrustedProxies(trustedProxies);
  const websiteFor = (host: string) => trackedWebsite(db, host);

  app.post(COLLECTOR_PATHS.event, { config: { public: true } }, async (request: FastifyRequest, reply) => {
    const input = parseCollectorBody(request.body);
    const site = websiteFor(siteHost(input.page.hostname));
    if (!site) throw new HttpError(404, NOT_FOUND, 'not_found');
    const verdict = classify(
      site,
      {
        ...input,
        userAgent: request.headers['user-agent'] ?? '',
        acceptLanguage: request.headers['accept-language'],
        ip: visitorIp(request.socket.remoteAddress, request.headers['x-forwarded-for'], trusted),
        atMs: now(),
      },
      countryOf,
    );
    if (!verdict.recorded) {
      throw new HttpError(403, 'This visit is excluded from tracking.', 'excluded');
    }
    recorder.record(site.id, verdict.hit);
    return reply.send({ message: 'Recorded.', status: 200 });
  });

  app.get(COLLECTOR_PATHS.script, { config: { public: true } }, async (request, reply) => {
    void reply
      .header('etag', TRACKING_SCRIPT_ETAG)
      .header('cache-control', 'public, max-age=3600')
      .header('content-type', 'application/javascript; charset=utf-8');
    if (notModified(request.headers['if-none-match'])) return reply.status(304).send();
    return reply.send(TRACKING_SCRIPT);
  });
}
