import Bowser from 'bowser';
import ipaddr from 'ipaddr.js';
import { isbot } from 'isbot';
import type { Hit, TrackedEvent } from './aggregate.js';
import { searchEngine, socialNetwork } from './referrer-groups.js';

/**
 * A collector request turned into a Hit, or the reason it is not recorded: pure (the country lookup
 * is passed in), so every rule is unit-testable.
 */

/** The longest page (path and kept query) recorded, as the original's column. */
export const MAX_PAGE = 255;

/** The fields of `POST /api/event`, already read from the form or JSON body. */
export interface CollectorInput {
  readonly page: URL;
  readonly referrer: string | undefined;
  readonly screenResolution: string | undefined;
  readonly event: TrackedEvent | null;
  readonly userAgent: string;
  readonly acceptLanguage: string | undefined;
  /** The client address the gateway resolved; undefined when unknown. */
  readonly ip: string | undefined;
  readonly atMs: number;
}

/** The website settings the collector applies. */
export interface TrackedSite {
  readonly url: string;
  readonly exclude_bots: number;
  readonly exclude_params: string | null;
  readonly exclude_ips: string | null;
}

export type Verdict = { recorded: true; hit: Hit } | { recorded: false; reason: 'ip' | 'bot' };

/** A host as websites are stored: lower case, without "www." and a trailing dot. */
export const siteHost = (hostname: string): string =>
  hostname
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/^www\./, '');

/** Whether `ip` is one of the one-per-line addresses or CIDR ranges (IPv4-mapped IPv6 read as IPv4). */
export function ipExcluded(ip: string | undefined, lines: string | null): boolean {
  if (ip === undefined || lines === null || !ipaddr.isValid(ip)) return false;
  const addr = ipaddr.process(ip);
  for (const raw of lines.split('\n')) {
    const line = raw.trim();
    try {
      if (line.includes('/')) {
        const [net, bits] = ipaddr.parseCIDR(line);
        if (net.kind() === addr.kind() && addr.match(net, bits)) return true;
      } else if (ipaddr.isValid(line)) {
        const one = ipaddr.process(line);
        if (one.kind() === addr.kind() && one.toNormalizedString() === addr.toNormalizedString()) return true;
      }
    } catch {
      // A line that does not parse excludes nothing (the API validates them when stored).
    }
  }
  return false;
}

/** The recorded page: path and query, without the excluded parameters ("&" alone: every one). */
export function recordedPage(page: URL, excludeParams: string | null): string {
  const lines = excludeParams === null ? [] : excludeParams.split('\n').map((l) => l.trim());
  let search = page.search;
  if (lines.includes('&')) search = '';
  else if (lines.length > 0 && search !== '') {
    const params = new URLSearchParams(search);
    for (const name of lines) params.delete(name);
    const kept = params.toString();
    search = kept === '' ? '' : `?${kept}`;
  }
  return `${page.pathname}${search}`.slice(0, MAX_PAGE);
}

/** The longest DNS name: a longer referrer host is no site's, and is not stored. */
const MAX_HOST = 253;

/** The referrer's host, when it is an http(s) URL with a host no longer than a DNS name. */
function referrerHost(referrer: string | undefined): string | undefined {
  if (!referrer) return undefined;
  try {
    const url = new URL(referrer);
    if (url.hostname.length > MAX_HOST + 1) return undefined; // + 1: a trailing dot
    return url.protocol === 'http:' || url.protocol === 'https:' ? siteHost(url.hostname) : undefined;
  } catch {
    return undefined;
  }
}

/** Accept-Language's first tag, its first two letters lower-cased ("en-US,de;q=0.8" → "en"). */
export function language(header: string | undefined): string | null {
  const first = header?.split(',')[0]?.split(';')[0]?.trim().toLowerCase() ?? '';
  return /^[a-z]{2}/.test(first) ? first.slice(0, 2) : null;
}

const RESOLUTION = /^[1-9]\d{0,4}x[1-9]\d{0,4}$/;

const cap = (value: string | undefined): string | null => (value ? value.slice(0, 64) : null);

export function classify(
  site: TrackedSite,
  input: CollectorInput,
  countryOf: (ip: string) => string | null,
): Verdict {
  if (ipExcluded(input.ip, site.exclude_ips)) return { recorded: false, reason: 'ip' };
  if (site.exclude_bots === 1 && isbot(input.userAgent)) return { recorded: false, reason: 'bot' };
  const from = referrerHost(input.referrer);
  const external = from !== undefined && from !== site.url ? from : null;
  const visitor = from === undefined || external !== null;
  const agent = Bowser.parse(input.userAgent);
  const resolution = input.screenResolution?.trim() ?? '';
  return {
    recorded: true,
    hit: {
      atMs: input.atMs,
      page: recordedPage(input.page, site.exclude_params),
      visitor,
      referrer: external,
      searchEngine: external === null ? null : searchEngine(external),
      socialNetwork: external === null ? null : socialNetwork(external),
      campaign: cap(input.page.searchParams.get('utm_campaign') ?? undefined),
      // Every pageview's, for the realtime rows; the aggregates count a visitor's only (aggregate.ts).
      country: input.ip !== undefined ? countryOf(input.ip) : null,
      language: language(input.acceptLanguage),
      browser: cap(agent.browser.name),
      operatingSystem: cap(agent.os.name),
      device: cap(agent.platform.type),
      screenResolution: RESOLUTION.test(resolution) ? resolution : null,
      event: input.event,
    },
  };
}
