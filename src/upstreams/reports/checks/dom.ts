import { findAll, getAttributeValue, textContent } from 'domutils';
import type { HtmlDocument, HtmlElement } from './types.js';

/** Small queries over an htmlparser2 document (tag and attribute names arrive lower-cased). */

export function elements(doc: HtmlDocument, tag: string): HtmlElement[] {
  return findAll((el) => el.name === tag, doc.children);
}

export function allElements(doc: HtmlDocument): HtmlElement[] {
  return findAll(() => true, doc.children);
}

export function attr(el: HtmlElement, name: string): string | undefined {
  return getAttributeValue(el, name);
}

export function text(el: HtmlElement): string {
  return textContent(el).replace(/\s+/g, ' ').trim();
}

/** Content of the first `<meta name=…>` (name compared case-insensitively). */
export function metaContent(doc: HtmlDocument, name: string): string | undefined {
  const meta = elements(doc, 'meta').find((el) => attr(el, 'name')?.trim().toLowerCase() === name);
  return meta === undefined ? undefined : (attr(meta, 'content') ?? '').trim();
}

/** The space-separated tokens of an attribute, lower-cased (rel="shortcut icon"). */
export function tokens(el: HtmlElement, name: string): string[] {
  return (attr(el, name) ?? '').toLowerCase().split(/\s+/).filter(Boolean);
}

export function withAttribute(doc: HtmlDocument, name: string): HtmlElement[] {
  return findAll((el) => el.attribs[name] !== undefined, doc.children);
}

/** An href or src made absolute against the page URL (kept as written when it does not parse). */
export function absolute(href: string, base: string): string {
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return href.trim();
  }
}
