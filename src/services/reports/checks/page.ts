import { absolute, attr, type PageTags } from './dom.js';
import { check, clip, LIMITS, SHOWN, type CheckResult, type PageFacts } from './types.js';

/** Checks of the document's body: links, images, size of the tree, obsolete markup. */

const NOT_LINKS = /^(#|javascript:|mailto:|tel:|data:)/i;

/** Links to this host (www. ignored) and elsewhere; passes up to LIMITS.links. */
export function inPageLinks(tags: PageTags, facts: PageFacts): CheckResult {
  const host = bareHost(facts.url);
  let internal = 0;
  let external = 0;
  for (const a of tags.of('a')) {
    const href = attr(a, 'href')?.trim();
    if (!href || NOT_LINKS.test(href)) continue;
    if (bareHost(absolute(href, facts.url)) === host) internal++;
    else external++;
  }
  const total = internal + external;
  return check('medium', total <= LIMITS.links, { internal, external }, { too_many: total });
}

/** Every image has a non-empty alt text; the error lists the first SHOWN.items without. */
export function imageKeywords(tags: PageTags, facts: PageFacts): CheckResult {
  const images = tags.of('img');
  const missing = images
    .filter((img) => !attr(img, 'alt')?.trim())
    .slice(0, SHOWN.items)
    .map((img) => clip(absolute(attr(img, 'src') ?? '', facts.url), SHOWN.url));
  return check('medium', missing.length === 0, images.length, { missing });
}

export function domSize(tags: PageTags): CheckResult {
  const nodes = tags.total;
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
export function deprecatedHtmlTags(tags: PageTags): CheckResult {
  const names = DEPRECATED_TAGS.filter((name) => tags.counts.has(name)).sort();
  const value = Object.fromEntries(names.map((n) => [n, tags.counts.get(n)!]));
  return check('low', names.length === 0, value, { deprecated: names });
}

function bareHost(url: string): string {
  try {
    return new URL(url).hostname.replace(/^www\./, '');
  } catch {
    return '';
  }
}
