import ipaddr from 'ipaddr.js';

/**
 * Pure normalisation of the websites API's free-form fields: the site's host, and the
 * one-per-line exclusion lists. No I/O, so the unit tests cover every case directly.
 */

/** A full URL: a scheme and "://". Anything else is read as a bare host, with an optional port and path. */
const WITH_SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;
/** host[:port][/path|?query|#fragment]: no scheme, no credentials, no whitespace. */
const BARE_HOST = /^[^\s/?#@:\\]+(?::\d+)?(?:[/?#].*)?$/s;
/** A DNS name as the WHATWG parser leaves it (lower case, IDN in punycode), without empty labels. */
const DNS_NAME =
  /^(?=.{1,253}$)(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/**
 * The host a website is stored under: lower case, without a leading "www.", without the port
 * (the original keeps the host alone, and visits are matched by host), without a trailing dot.
 * Accepts an http(s) URL or a bare host; returns undefined for anything else.
 */
export function normaliseHost(input: string): string | undefined {
  const value = input.trim();
  let url: URL;
  try {
    const scheme = WITH_SCHEME.exec(value);
    if (scheme) {
      if (!['http', 'https'].includes(scheme[1]!.toLowerCase())) return undefined;
      // An empty authority: the WHATWG parser would read "https:///x" as host "x".
      if (/^[/\\]/.test(value.slice(scheme[0].length))) return undefined;
      url = new URL(value);
    } else {
      if (!BARE_HOST.test(value)) return undefined;
      url = new URL(`http://${value}`);
    }
  } catch {
    return undefined;
  }
  if (url.username || url.password) return undefined;
  let host = url.hostname.replace(/\.$/, '');
  if (host.startsWith('[')) return ipaddr.IPv6.isValid(host.slice(1, -1)) ? host : undefined;
  // IPv4 hosts pass too: the WHATWG parser already wrote them dotted ("0x7f.1" → "127.0.0.1").
  if (!DNS_NAME.test(host)) return undefined;
  if (host.startsWith('www.') && host.length > 4) host = host.slice(4);
  return host;
}

/** The non-empty lines of a one-per-line field, trimmed. */
export function splitLines(value: string): string[] {
  return value
    .split(/\r\n|\r|\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
}

/** A query parameter name as it appears in a URL: no whitespace, no "&", "=", "?" or "#", at most 255 characters. */
export function isParamName(line: string): boolean {
  return line.length <= 255 && /^[^\s&=?#]+$/.test(line);
}

/** Dotted-decimal IPv4 or IPv6 (no zone): ipaddr.js alone also takes "127.1" and "0x7f.0.0.1", which are ambiguous in a list. */
function isPlainAddress(text: string): boolean {
  return ipaddr.IPv4.isValidFourPartDecimal(text) || (ipaddr.IPv6.isValid(text) && !text.includes('%'));
}

/** An IPv4 or IPv6 address, or a CIDR range of either (checked with ipaddr.js). */
export function isIpOrCidr(line: string): boolean {
  const slash = line.indexOf('/');
  if (slash < 0) return isPlainAddress(line);
  return (
    isPlainAddress(line.slice(0, slash)) &&
    /^\d{1,3}$/.test(line.slice(slash + 1)) &&
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
