import { absolute, attr, elements, metaContent, text, tokens, withAttribute } from './dom.js';
import { check, LIMITS, type CheckResult, type HtmlDocument, type PageFacts } from './types.js';

/** Checks of the document's head and headings. */

export function title(doc: HtmlDocument): CheckResult {
  const el = elements(doc, 'title')[0];
  const value = el === undefined ? null : text(el);
  if (!value) return check('high', false, value, { missing: null });
  if (value.length > LIMITS.titleMax) return check('high', false, value, { too_long: value.length });
  return check('high', true, value, {});
}

export function metaDescription(doc: HtmlDocument): CheckResult {
  const value = metaContent(doc, 'description') || null;
  if (value === null) return check('high', false, null, { missing: null });
  if (value.length > LIMITS.descriptionMax) return check('high', false, value, { too_long: value.length });
  return check('high', true, value, {});
}

/** Exactly one h1; the value lists every heading's text by level. */
export function headings(doc: HtmlDocument): CheckResult {
  const value: Record<string, string[]> = {};
  for (const level of ['h1', 'h2', 'h3', 'h4', 'h5', 'h6']) {
    const found = elements(doc, level).map(text);
    if (found.length > 0) value[level] = found;
  }
  const h1 = value.h1?.length ?? 0;
  if (h1 === 0) return check('high', false, value, { missing: null });
  return check('high', h1 === 1, value, { too_many: h1 });
}

export function metaViewport(doc: HtmlDocument): CheckResult {
  const value = metaContent(doc, 'viewport') || null;
  return check('medium', value !== null, value, { missing: null });
}

/** Declared in the document: <meta charset> or its http-equiv form. */
export function charset(doc: HtmlDocument): CheckResult {
  let value: string | null = null;
  for (const meta of elements(doc, 'meta')) {
    const direct = attr(meta, 'charset')?.trim();
    const equiv =
      attr(meta, 'http-equiv')?.toLowerCase() === 'content-type'
        ? /charset\s*=\s*([\w.:-]+)/i.exec(attr(meta, 'content') ?? '')?.[1]
        : undefined;
    value = direct || equiv || null;
    if (value) break;
  }
  return check('medium', value !== null, value, { missing: null });
}

export function language(doc: HtmlDocument): CheckResult {
  const html = elements(doc, 'html')[0];
  const value = (html && attr(html, 'lang')?.trim()) || null;
  return check('medium', value !== null, value, { missing: null });
}

export function favicon(doc: HtmlDocument, facts: PageFacts): CheckResult {
  const link = elements(doc, 'link').find((el) => tokens(el, 'rel').includes('icon') && attr(el, 'href'));
  const value = link ? absolute(attr(link, 'href')!, facts.url) : null;
  return check('low', value !== null, value, { missing: null });
}

/** Passes unless a robots meta tag or the X-Robots-Tag header asks not to index the page. */
export function noindex(doc: HtmlDocument, facts: PageFacts): CheckResult {
  const sources = [metaContent(doc, 'robots'), metaContent(doc, 'googlebot'), facts.headers['x-robots-tag']];
  const found = sources.find((s) => s !== undefined && /\bnoindex\b|\bnone\b/i.test(s)) ?? null;
  return check('high', found === null, found, { noindex: found });
}

/** JSON-LD, microdata or Open Graph: any of them passes. */
export function structuredData(doc: HtmlDocument): CheckResult {
  const value = {
    json_ld: elements(doc, 'script').filter(
      (el) => attr(el, 'type')?.trim().toLowerCase() === 'application/ld+json',
    ).length,
    microdata: withAttribute(doc, 'itemscope').length,
    open_graph: elements(doc, 'meta').filter((el) =>
      attr(el, 'property')?.trim().toLowerCase().startsWith('og:'),
    ).length,
  };
  const passed = value.json_ld + value.microdata + value.open_graph > 0;
  return check('low', passed, value, { missing: null });
}
