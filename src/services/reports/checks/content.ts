import { absolute, attr, metaContent, text, tokens, type PageTags } from './dom.js';
import { check, clip, LIMITS, SHOWN, type CheckResult, type PageFacts } from './types.js';

/** Checks of the document's head and headings. Texts shown are cut at SHOWN.text, lists at SHOWN.items. */

export function title(tags: PageTags): CheckResult {
  const el = tags.of('title')[0];
  const found = el === undefined ? undefined : text(el, SHOWN.text);
  if (!found?.value) return check('high', false, found === undefined ? null : found.value, { missing: null });
  if (found.length > LIMITS.titleMax) return check('high', false, found.value, { too_long: found.length });
  return check('high', true, found.value, {});
}

export function metaDescription(tags: PageTags): CheckResult {
  const content = metaContent(tags, 'description') || null;
  if (content === null) return check('high', false, null, { missing: null });
  const value = clip(content, SHOWN.text);
  if (content.length > LIMITS.descriptionMax)
    return check('high', false, value, { too_long: content.length });
  return check('high', true, value, {});
}

/** Exactly one h1; the value lists the headings' texts by level (the first SHOWN.items of each). */
export function headings(tags: PageTags): CheckResult {
  const value: Record<string, string[]> = {};
  for (const level of ['h1', 'h2', 'h3', 'h4', 'h5', 'h6']) {
    const found = tags.of(level);
    if (found.length > 0) value[level] = found.slice(0, SHOWN.items).map((el) => text(el, SHOWN.text).value);
  }
  const h1 = tags.of('h1').length;
  if (h1 === 0) return check('high', false, value, { missing: null });
  return check('high', h1 === 1, value, { too_many: h1 });
}

/** The content of a meta tag, cut, or null when missing or empty. */
function shownMeta(tags: PageTags, name: string): string | null {
  const content = metaContent(tags, name);
  return content ? clip(content, SHOWN.text) : null;
}

export function metaViewport(tags: PageTags): CheckResult {
  const value = shownMeta(tags, 'viewport');
  return check('medium', value !== null, value, { missing: null });
}

/** Declared in the document: <meta charset> or its http-equiv form. */
export function charset(tags: PageTags): CheckResult {
  let value: string | null = null;
  for (const meta of tags.of('meta')) {
    const direct = attr(meta, 'charset')?.trim();
    const equiv =
      attr(meta, 'http-equiv')?.toLowerCase() === 'content-type'
        ? /charset\s*=\s*([\w.:-]+)/i.exec(attr(meta, 'content') ?? '')?.[1]
        : undefined;
    value = direct || equiv || null;
    if (value) break;
  }
  return check('medium', value !== null, value && clip(value, SHOWN.text), { missing: null });
}

export function language(tags: PageTags): CheckResult {
  const html = tags.of('html')[0];
  const lang = (html && attr(html, 'lang')?.trim()) || null;
  const value = lang && clip(lang, SHOWN.text);
  return check('medium', value !== null, value, { missing: null });
}

export function favicon(tags: PageTags, facts: PageFacts): CheckResult {
  const link = tags.of('link').find((el) => tokens(el, 'rel').includes('icon') && attr(el, 'href'));
  const value = link ? clip(absolute(attr(link, 'href')!, facts.url), SHOWN.url) : null;
  return check('low', value !== null, value, { missing: null });
}

/** Passes unless a robots meta tag or the X-Robots-Tag header asks not to index the page. */
export function noindex(tags: PageTags, facts: PageFacts): CheckResult {
  const sources = [
    metaContent(tags, 'robots'),
    metaContent(tags, 'googlebot'),
    facts.headers['x-robots-tag'],
  ];
  const found = sources.find((s) => s !== undefined && /\bnoindex\b|\bnone\b/i.test(s));
  const value = found === undefined ? null : clip(found, SHOWN.text);
  return check('high', value === null, value, { noindex: value });
}

/** JSON-LD, microdata or Open Graph: any of them passes. */
export function structuredData(tags: PageTags): CheckResult {
  const value = {
    json_ld: tags
      .of('script')
      .filter((el) => attr(el, 'type')?.trim().toLowerCase() === 'application/ld+json').length,
    microdata: tags.itemscope,
    open_graph: tags.of('meta').filter((el) => attr(el, 'property')?.trim().toLowerCase().startsWith('og:'))
      .length,
  };
  const passed = value.json_ld + value.microdata + value.open_graph > 0;
  return check('low', passed, value, { missing: null });
}
