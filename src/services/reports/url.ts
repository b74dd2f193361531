/** The URLs of reports: what is accepted, how a report shows it, and its project. */

/**
 * An absolute http(s) URL with a host and without credentials, or undefined. A user name or
 * password would be sent to the page and kept in the report (page_url, https_encryption, the
 * URLs made absolute against it): such a URL is refused.
 */
export function parsePageUrl(input: string): URL | undefined {
  try {
    const url = new URL(input.trim());
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) return undefined;
    if (url.username !== '' || url.password !== '') return undefined;
    return url;
  } catch {
    return undefined;
  }
}

/**
 * The report's `url`: no scheme, no `www.`, no fragment, and no trailing `/` for a root URL
 * (`https://www.example.com/` → `example.com`; `https://example.com/a/` → `example.com/a/`).
 */
export function displayUrl(href: string): string {
  const url = new URL(href);
  const host = url.host.replace(/^www\./, '');
  const rest = url.pathname + url.search;
  return rest === '/' ? host : host + rest;
}

/** The report's `project`: the page's host name without `www.` (and without a port). */
export function projectOf(href: string): string {
  return new URL(href).hostname.replace(/^www\./, '');
}
