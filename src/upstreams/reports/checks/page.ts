import { absolute, attr, allElements, elements } from './dom.js';
import { check, LIMITS, type CheckResult, type HtmlDocument, type PageFacts } from './types.js';

/** Checks of the document's body: links, images, size of the tree, obsolete markup. */

const NOT_LINKS = /^(#|javascript:|mailto:|tel:|data:)/i;

/** Links to this host (www. ignored) and elsewhere; passes up to LIMITS.links. */
export function inPageLinks(doc: HtmlDocument, facts: PageFacts): CheckResult {
  const host = bareHost(facts.url);
  let internal = 0;
  let external = 0;
  for (const a of elements(doc, 'a')) {
    const href = attr(a, 'href')?.trim();
    if (!href || NOT_LINKS.test(href)) continue;
    if (bareHost(absolute(href, facts.url)) === host) internal++;
    else external++;
  }
  const total = internal + external;
  return check('medium', total <= LIMITS.links, { internal, external }, { too_many: total });
}

/** Every image has a non-empty alt text. */
export function imageKeywords(doc: HtmlDocument, facts: PageFacts): CheckResult {
  const images = elements(doc, 'img');
  const missing = images
    .filter((img) => !attr(img, 'alt')?.trim())
    .map((img) => absolute(attr(img, 'src') ?? '', facts.url));
  return check('medium', missing.length === 0, images.length, { missing });
}

export function domSize(doc: HtmlDocument): CheckResult {
  const nodes = allElements(doc).length;
  return check('low', nodes <= LIMITS.domNodes, nodes, { too_many: nodes });
}

/** Elements HTML5 made obsolete. */
export const DEPRECATED_TAGS: readonly string[] = [
  'acronym',
  'applet',
  'basefont',
  'big',
  'blink',
  'center',
  'dir',
  'font',
  'frame',
  'frameset',
  'isindex',
  'marquee',
  'nobr',
  'noframes',
  'strike',
  'tt',
];

/** The value counts each obsolete element found. */
export function deprecatedHtmlTags(doc: HtmlDocument): CheckResult {
  const found: Record<string, number> = {};
  for (const el of allElements(doc)) {
    if (DEPRECATED_TAGS.includes(el.name)) found[el.name] = (found[el.name] ?? 0) + 1;
  }
  const names = Object.keys(found).sort();
  const value = Object.fromEntries(names.map((n) => [n, found[n]!]));
  return check('low', names.length === 0, value, { deprecated: names });
}

function bareHost(url: string): string {
  try {
    return new URL(url).hostname.replace(/^www\./, '');
  } catch {
    return '';
  }
}
