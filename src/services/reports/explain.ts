import type { CheckResult, Json } from './checks/types.js';
import { LIMITS } from './checks/types.js';

/**
 * What the report page says of each check: its title, its value in words (units, counts, lists,
 * never JSON), what it means, and, when it failed, what its findings are and what to do. Pure.
 */

export interface CheckText {
  readonly title: string;
  /** What the check looks at, and why it matters. */
  readonly means: string;
  /** What to do when it fails. */
  readonly todo: string;
}

const kb = (bytes: number) => `${Math.round(bytes / 1000)} kB`;

export const CHECK_TEXTS: Record<string, CheckText> = {
  title: {
    title: 'Title',
    means: `The <title> is the headline of the page in search results and browser tabs. Up to ${LIMITS.titleMax} characters are shown in full.`,
    todo: `Give the page one <title> that names what it offers, in at most ${LIMITS.titleMax} characters.`,
  },
  meta_description: {
    title: 'Meta description',
    means: `Search engines often show the meta description under the title in their results; up to ${LIMITS.descriptionMax} characters.`,
    todo: `Add <meta name="description" content="…"> with a summary of the page, at most ${LIMITS.descriptionMax} characters.`,
  },
  headings: {
    title: 'Headings',
    means:
      'One <h1> names the main topic of the page; h2 to h6 structure the rest, for readers and crawlers.',
    todo: 'Use exactly one <h1> for the main topic, and h2–h6 for the sections under it.',
  },
  https_encryption: {
    title: 'HTTPS encryption',
    means:
      'A page served over HTTPS cannot be read or changed on its way; browsers mark plain HTTP as not secure.',
    todo: 'Serve the page over HTTPS (a free certificate from Let’s Encrypt will do) and redirect HTTP to it.',
  },
  meta_viewport: {
    title: 'Meta viewport',
    means: 'Without a viewport tag, phones render the page at desktop width and shrink it.',
    todo: 'Add <meta name="viewport" content="width=device-width, initial-scale=1"> to the <head>.',
  },
  charset: {
    title: 'Charset',
    means: 'The declared character encoding lets browsers show every letter as written.',
    todo: 'Add <meta charset="utf-8"> as the first element of the <head>.',
  },
  language: {
    title: 'Language',
    means: 'The lang attribute tells browsers, screen readers and search engines the language of the page.',
    todo: 'Set the language on the root element, e.g. <html lang="en">.',
  },
  favicon: {
    title: 'Favicon',
    means: 'The small icon shown in tabs, bookmarks and some search results.',
    todo: 'Add <link rel="icon" href="/favicon.ico"> (or a PNG or SVG) to the <head>.',
  },
  noindex: {
    title: 'Noindex',
    means: 'A robots meta tag or X-Robots-Tag header with noindex keeps the page out of search results.',
    todo: 'Remove noindex from the robots meta tag and the X-Robots-Tag header, unless the page should stay out of search.',
  },
  robots: {
    title: 'Robots.txt',
    means:
      'The site’s robots.txt tells crawlers which paths they may fetch; a page they may not fetch is not read by search engines.',
    todo: 'Remove or narrow the Disallow rules shown, or add an Allow rule for this page, in /robots.txt.',
  },
  in_page_links: {
    title: 'In-page links',
    means: `Links pass visitors and ranking on; more than ${LIMITS.links} on one page dilute them.`,
    todo: `Keep the page to at most ${LIMITS.links} links: group them, or move some to other pages.`,
  },
  image_keywords: {
    title: 'Image alt text',
    means:
      'Alt text describes an image to screen readers and search engines, and shows when the image cannot load.',
    todo: 'Give each image listed an alt attribute that says what it shows (alt="" for a purely decorative one).',
  },
  text_compression: {
    title: 'Text compression',
    means: 'Compressed HTML (gzip, Brotli) is several times smaller, so the page arrives sooner.',
    todo: 'Turn on gzip or Brotli for text/html in the web server or CDN.',
  },
  load_time: {
    title: 'Load time',
    means: `The time from the request to the last byte of the HTML. Over ${LIMITS.loadTimeSeconds} s, visitors start to leave.`,
    todo: `Bring it under ${LIMITS.loadTimeSeconds} s: cache the page, speed up the server’s work, or serve it from a CDN.`,
  },
  page_size: {
    title: 'Page size',
    means: `The size of the HTML alone (images, scripts and styles not counted). Over ${kb(LIMITS.pageSize)} it is slow on a mobile network.`,
    todo: `Bring the HTML under ${kb(LIMITS.pageSize)}: move inline scripts, styles and data to files, and paginate long lists.`,
  },
  dom_size: {
    title: 'DOM size',
    means: `The number of HTML elements. Over ${LIMITS.domNodes.toLocaleString('en')} the page renders and responds slowly.`,
    todo: `Simplify the markup to at most ${LIMITS.domNodes.toLocaleString('en')} elements: fewer wrappers, and load long lists on demand.`,
  },
  deprecated_html_tags: {
    title: 'Deprecated HTML tags',
    means: 'Elements HTML5 made obsolete may render differently, or not at all, in current browsers.',
    todo: 'Replace them with current elements and CSS (e.g. <center> and <font> with CSS).',
  },
  structured_data: {
    title: 'Structured data',
    means:
      'JSON-LD, microdata or Open Graph describe the page to search engines and social networks, for rich results and link previews.',
    todo: 'Add JSON-LD (schema.org) or Open Graph tags (og:title, og:description, og:image).',
  },
};

const plural = (n: number, one: string, many = `${one}s`) =>
  `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

const isRecord = (v: Json | undefined): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A number of bytes as people read it: 714 B, 12.4 kB, 1.2 MB (SI units). */
export function bytesText(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** Seconds as ms under one second, else seconds: 0.02 → 20 ms, 2.5 → 2.5 s. */
export function secondsText(seconds: number): string {
  return seconds < 1 ? `${Math.round(seconds * 1000)} ms` : `${seconds} s`;
}

/** "1 heading: Pricing", "3 headings: h1 Pricing; h2 Plans, FAQ". */
function headingsText(value: Record<string, Json>): string {
  const levels = Object.entries(value).filter((e): e is [string, Json[]] => Array.isArray(e[1]));
  const count = levels.reduce((n, [, texts]) => n + texts.length, 0);
  if (count === 0) return 'No headings';
  const only = levels.length === 1 && levels[0]![0] === 'h1';
  const list = levels
    .map(([level, texts]) => `${only ? '' : `${level} `}${texts.map(String).join(', ')}`)
    .join('; ');
  return `${plural(count, 'heading')}: ${list}`;
}

/** The value of a check in words; never JSON. */
export function valueText(name: string, c: CheckResult): string {
  const v = c.value;
  switch (name) {
    case 'headings':
      return isRecord(v) ? headingsText(v) : 'No headings';
    case 'https_encryption':
      return c.passed ? 'Served over HTTPS' : 'Served over plain HTTP';
    case 'noindex':
      return v === null ? 'No noindex directive' : `noindex: ${String(v)}`;
    case 'robots':
      return c.passed ? 'Crawlers may fetch the page' : 'robots.txt keeps crawlers from the page';
    case 'in_page_links':
      if (!isRecord(v)) break;
      return `${plural(Number(v.internal), 'link')} to this site, ${plural(Number(v.external), 'link')} elsewhere`;
    case 'image_keywords':
      return typeof v === 'number' ? plural(v, 'image') : '–';
    case 'text_compression':
      return v === null ? 'Not compressed' : `Compressed (${String(v)})`;
    case 'load_time':
      return typeof v === 'number' ? secondsText(v) : '–';
    case 'page_size':
      return typeof v === 'number' ? bytesText(v) : '–';
    case 'dom_size':
      return typeof v === 'number' ? plural(v, 'element') : '–';
    case 'deprecated_html_tags':
      if (!isRecord(v)) break;
      return Object.keys(v).length === 0
        ? 'None'
        : Object.entries(v)
            .map(([tag, n]) => `<${tag}> ×${String(n)}`)
            .join(', ');
    case 'structured_data': {
      if (!isRecord(v)) break;
      const found = [
        [Number(v.json_ld), 'JSON-LD block'],
        [Number(v.microdata), 'microdata item'],
        [Number(v.open_graph), 'Open Graph tag'],
      ] as const;
      const shown = found.filter(([n]) => n > 0).map(([n, what]) => plural(n, what));
      return shown.length ? shown.join(', ') : 'None';
    }
  }
  if (v === null || v === undefined) return 'Missing';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return '–';
}

/** The findings of a failed check, in words, besides its value. */
export function issueTexts(name: string, c: CheckResult): string[] {
  if (c.passed) return [];
  return Object.entries(c.errors ?? {})
    .map(([kind, detail]) => issueText(name, kind, detail))
    .filter(Boolean);
}

function issueText(name: string, kind: string, detail: Json): string {
  const list = (items: Json) => (Array.isArray(items) ? items.map(String).join(', ') : String(items));
  switch (kind) {
    case 'missing':
      if (name === 'image_keywords' && Array.isArray(detail))
        return `${plural(detail.length, 'image')} without alt text: ${list(detail)}`;
      if (name === 'headings') return 'The page has no <h1>.';
      // The value already says what is missing.
      return '';
    case 'too_long':
      return `${plural(Number(detail), 'character')}: longer than ${
        name === 'title' ? LIMITS.titleMax : LIMITS.descriptionMax
      }.`;
    case 'too_many':
      if (name === 'headings') return `${plural(Number(detail), '<h1>')}: there should be one.`;
      if (name === 'in_page_links') return `${plural(Number(detail), 'link')}: more than ${LIMITS.links}.`;
      if (name === 'dom_size')
        return `${plural(Number(detail), 'element')}: more than ${LIMITS.domNodes.toLocaleString('en')}.`;
      return `Too many: ${String(detail)}.`;
    case 'too_slow':
      return `${secondsText(Number(detail))}: slower than ${LIMITS.loadTimeSeconds} s.`;
    case 'too_large':
      return `${bytesText(Number(detail))}: larger than ${kb(LIMITS.pageSize)}.`;
    case 'noindex':
      return `Asks search engines not to index the page: “${String(detail)}”.`;
    case 'failed':
      return `Blocked by: ${(Array.isArray(detail) ? detail : [detail]).map((r) => `Disallow: ${String(r)}`).join(', ')}.`;
    case 'deprecated':
      return `Obsolete elements: ${(Array.isArray(detail) ? detail : [detail]).map((t) => `<${String(t)}>`).join(', ')}.`;
    default:
      return detail === null ? kind : `${kind}: ${list(detail)}`;
  }
}

/** Failed checks first, the more important first; the order of the results otherwise. */
export function orderedChecks(results: Record<string, CheckResult>): [string, CheckResult][] {
  const rank = { high: 0, medium: 1, low: 2 } as const;
  return Object.entries(results)
    .map((entry, i) => ({ entry, i }))
    .sort(
      (a, b) =>
        Number(a.entry[1].passed) - Number(b.entry[1].passed) ||
        (a.entry[1].passed ? 0 : rank[a.entry[1].importance] - rank[b.entry[1].importance]) ||
        a.i - b.i,
    )
    .map(({ entry }) => entry);
}
