import { getAttributeValue } from 'domutils';
import { ElementType } from 'htmlparser2';
import { clip, type HtmlDocument, type HtmlElement } from './types.js';

/**
 * The document as the checks read it: one walk over the tree collects the elements of the tags
 * they look at and the counts they need (tag and attribute names arrive lower-cased). The walk
 * and the text of an element use a stack, not recursion: deeply nested markup cannot overflow.
 */

type HtmlNode = HtmlDocument['children'][number];

/** The tags whose elements the checks read. */
const COLLECTED = new Set([
  'html',
  'title',
  'meta',
  'link',
  'script',
  'a',
  'img',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
]);

export interface PageTags {
  /** The elements of `tag` (one of COLLECTED), in document order. */
  of(tag: string): readonly HtmlElement[];
  /** How many elements of each tag name. */
  readonly counts: ReadonlyMap<string, number>;
  /** Every element. */
  readonly total: number;
  /** Elements with an itemscope attribute (microdata). */
  readonly itemscope: number;
}

/** Pushes the children of `node` (if any) so that they are popped in document order. */
function pushChildren(stack: HtmlNode[], node: HtmlNode | HtmlDocument): void {
  if (!('children' in node)) return;
  for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
}

/** One walk over the document, in document order. */
export function collectTags(doc: HtmlDocument): PageTags {
  const kept = new Map<string, HtmlElement[]>();
  const counts = new Map<string, number>();
  let total = 0;
  let itemscope = 0;
  const stack: HtmlNode[] = [];
  pushChildren(stack, doc);
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (ElementType.isTag(node)) {
      const el = node as HtmlElement;
      total++;
      counts.set(el.name, (counts.get(el.name) ?? 0) + 1);
      if (el.attribs.itemscope !== undefined) itemscope++;
      if (COLLECTED.has(el.name)) {
        const list = kept.get(el.name);
        if (list) list.push(el);
        else kept.set(el.name, [el]);
      }
    }
    pushChildren(stack, node);
  }
  return { of: (tag) => kept.get(tag) ?? [], counts, total, itemscope };
}

export function attr(el: HtmlElement, name: string): string | undefined {
  return getAttributeValue(el, name);
}

/**
 * The text of an element, runs of white space made one space and trimmed, cut at `max`
 * characters; `length` is the length of the whole text.
 */
export function text(el: HtmlElement, max: number): { value: string; length: number } {
  let kept = '';
  let length = 0;
  let space = false;
  const add = (piece: string) => {
    length += piece.length;
    // One character over, so that clip() can tell a cut surrogate pair.
    if (kept.length <= max) kept += piece.slice(0, max + 1 - kept.length);
  };
  const stack: HtmlNode[] = [];
  pushChildren(stack, el);
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.type === ElementType.Text) {
      for (const [run] of (node as { data: string }).data.matchAll(/\s+|\S+/g)) {
        if (/^\s/.test(run)) {
          space = true;
          continue;
        }
        if (space && length > 0) add(' ');
        space = false;
        add(run);
      }
    } else if (node.type !== ElementType.Comment) pushChildren(stack, node);
  }
  return { value: clip(kept, max), length };
}

/** Content of the first `<meta name=…>` (name compared case-insensitively), trimmed. */
export function metaContent(tags: PageTags, name: string): string | undefined {
  const meta = tags.of('meta').find((el) => attr(el, 'name')?.trim().toLowerCase() === name);
  return meta === undefined ? undefined : (attr(meta, 'content') ?? '').trim();
}

/** The space-separated tokens of an attribute, lower-cased (rel="shortcut icon"). */
export function tokens(el: HtmlElement, name: string): string[] {
  return (attr(el, name) ?? '').toLowerCase().split(/\s+/).filter(Boolean);
}

/** An href or src made absolute against the page URL (kept as written when it does not parse). */
export function absolute(href: string, base: string): string {
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return href.trim();
  }
}
