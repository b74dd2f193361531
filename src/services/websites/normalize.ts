import { domainToASCII } from 'node:url';
import ipaddr from 'ipaddr.js';

/**
 * Pure normalisation of the websites API's free-form fields: the site's host, and the
 * one-per-line exclusion lists. No I/O, so the unit tests cover every case directly.
 */

/** A full URL: a scheme and "://". Anything else is read as a bare host, with an optional port and path. */
const WITH_SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;
/** host[:port][/path|?query|#fragment]: no scheme, no credentials, no whitespace. */
const BARE_HOST = /^[^\s/?#@:\\]+(?::\d+)?(?:[/?#].*)?$/s;
/**
 * A DNS name as the WHATWG parser leaves it (lower case, IDN in punycode): labels of letters,
 * digits and hyphens ("xn--" labels included), not starting or ending with a hyphen, no empty label.
 */
const DNS_NAME =
  /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * The host as the client wrote it: the authority without credentials and port, and without one
 * trailing dot. `rest` is the input after the scheme's "://" (or the bare host).
 */
function writtenHost(rest: string): string {
  const authority = rest.split(/[/?#\\]/, 1)[0]!;
  const host = authority.slice(authority.lastIndexOf('@') + 1);
  const colon = host.indexOf(':');
  return (colon < 0 ? host : host.slice(0, colon)).replace(/\.$/, '').toLowerCase();
}

/**
 * The host a website is stored under: lower case, without a leading "www.", without the port
 * (the original keeps the host alone, and visits are matched by host), without a trailing dot.
 * Accepts an http(s) URL or a bare host; returns undefined for anything else.
 *
 * An IPv4 host must be written as four decimal parts: the WHATWG parser also reads "1.2.3",
 * "0x7f.1" or "010.0.0.1" as addresses (as "1.2.0.3", "127.0.0.1", "8.0.0.1"), which would store
 * a host the client never wrote.
 */
export function normaliseHost(input: string): string | undefined {
  const value = input.trim();
  let url: URL;
  let rest: string;
  try {
    const scheme = WITH_SCHEME.exec(value);
    if (scheme) {
      if (!['http', 'https'].includes(scheme[1]!.toLowerCase())) return undefined;
      rest = value.slice(scheme[0].length);
      // An empty authority: the WHATWG parser would read "https:///x" as host "x".
      if (/^[/\\]/.test(rest)) return undefined;
      url = new URL(value);
    } else {
      if (!BARE_HOST.test(value)) return undefined;
      rest = value;
      url = new URL(`http://${value}`);
    }
  } catch {
    return undefined;
  }
  if (url.username || url.password) return undefined;
  const hostname = url.hostname;
  if (hostname.startsWith('[')) return ipaddr.IPv6.isValid(hostname.slice(1, -1)) ? hostname : undefined;
  // The parser writes every IPv4 address as four decimal parts: the client must have, too.
  if (ipaddr.IPv4.isValidFourPartDecimal(hostname)) {
    return writtenHost(rest) === hostname ? hostname : undefined;
  }
  // "www." first, then the trailing dot: "www." alone leaves nothing, and is refused.
  const host = hostname.replace(/^www\./, '').replace(/\.$/, '');
  return DNS_NAME.test(host) ? host : undefined;
}

/** The dots IDNA reads as label separators, besides ".". */
const IDN_DOTS = /[\u3002\uff0e\uff61]/g;

/**
 * The punycode form of a search term, for the hosts stored in punycode; undefined when the term is
 * ASCII already or cannot be converted. Each label with a non-ASCII character is converted on its
 * own (ASCII labels are kept), so the form matches a stored host only where the term's Unicode
 * labels are whole labels: "bücher" and "bücher.de" find "xn--bcher-kva.de", a part of a label
 * ("büch", "ücher") does not (its punycode is not a substring of the label's). The list searches
 * the raw term and this form.
 */
export function asciiSearch(term: string): string | undefined {
  if (!/[^\x20-\x7e]/.test(term)) return undefined;
  const labels = term.replace(IDN_DOTS, '.').split('.');
  const ascii: string[] = [];
  for (const label of labels) {
    if (!/[^\x20-\x7e]/.test(label)) {
      ascii.push(label.toLowerCase());
      continue;
    }
    // One label in, one label out ("１２３" would come back as the address "0.0.0.123").
    const converted = domainToASCII(label);
    if (!/^[a-z0-9-]+$/.test(converted)) return undefined;
    ascii.push(converted);
  }
  return ascii.join('.');
}

/** The non-empty lines of a one-per-line field, trimmed. */
export function splitLines(value: string): string[] {
  return value
    .split(/\r\n|\r|\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
}

/**
 * A query parameter name as it appears in a URL: no whitespace, no "&", "=", "?" or "#", at most 255
 * characters; or "&" alone, which excludes every parameter (as the original).
 */
export function isParamName(line: string): boolean {
  return line === '&' || (line.length <= 255 && /^[^\s&=?#]+$/.test(line));
}

/** Dotted-decimal IPv4 or IPv6 (no zone): ipaddr.js alone also takes "127.1" and "0x7f.0.0.1", which are ambiguous in a list. */
function isPlainAddress(text: string): boolean {
  return ipaddr.IPv4.isValidFourPartDecimal(text) || (ipaddr.IPv6.isValid(text) && !text.includes('%'));
}

/** An IPv4 or IPv6 address, or a CIDR range of either (checked with ipaddr.js); the prefix length without leading zeros. */
export function isIpOrCidr(line: string): boolean {
  const slash = line.indexOf('/');
  if (slash < 0) return isPlainAddress(line);
  return (
    isPlainAddress(line.slice(0, slash)) &&
    /^(?:0|[1-9]\d{0,2})$/.test(line.slice(slash + 1)) &&
    ipaddr.isValidCIDR(line)
  );
}

/** The outcome of checking a one-per-line field: the stored text (null when empty), or the first bad line. */
export type LinesResult = { ok: true; value: string | null } | { ok: false; line: string };

/** Checks every non-empty line with `valid`; stores them trimmed and "\n"-joined. */
export function normaliseLines(value: string, valid: (line: string) => boolean): LinesResult {
  const lines = splitLines(value);
  const bad = lines.find((line) => !valid(line));
  if (bad !== undefined) return { ok: false, line: bad };
  return { ok: true, value: lines.length > 0 ? lines.join('\n') : null };
}
