/**
 * The statistics pages' URL forms: where a bookmark written for the original, or typed by hand,
 * goes. Pure, so that the rules can be read (and tested) apart from the routes.
 */

/** The canonical form of a page URL (path and query): the domain segment in lower case, no trailing slash. */
export function canonicalPageUrl(url: string): string {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? '' : url.slice(q);
  const [, domain = '', ...rest] = path.split('/');
  const segments = [domain.toLowerCase(), ...rest];
  while (segments.length > 1 && segments.at(-1) === '') segments.pop();
  return `/${segments.join('/')}${query}`;
}

/** Where to redirect (301) a page URL that is not canonical; undefined when it is. */
export function pageRedirect(url: string): string | undefined {
  const canonical = canonicalPageUrl(url);
  return canonical === url ? undefined : canonical;
}

/**
 * The section a path segment names: its slug ("landing-pages"), the original's spelling with
 * underscores ("landing_pages"), either with ".csv"; `csv` says whether it asked for the CSV.
 */
export function sectionSlug(segment: string): { slug: string; csv: boolean } {
  const csv = segment.endsWith('.csv');
  const name = csv ? segment.slice(0, -4) : segment;
  return { slug: name.replace(/_/g, '-'), csv };
}
