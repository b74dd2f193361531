import type { findAll } from 'domutils';
import type { parseDocument } from 'htmlparser2';

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

export type Importance = 'high' | 'medium' | 'low';

/** One check of a report, as the originals store it: `errors` only when it fails. */
export interface CheckResult {
  readonly passed: boolean;
  readonly importance: Importance;
  readonly value: Json;
  readonly errors?: Record<string, Json>;
}

export const CHECK_NAMES = [
  'title',
  'meta_description',
  'headings',
  'https_encryption',
  'meta_viewport',
  'charset',
  'language',
  'favicon',
  'noindex',
  'robots',
  'in_page_links',
  'image_keywords',
  'text_compression',
  'load_time',
  'page_size',
  'dom_size',
  'deprecated_html_tags',
  'structured_data',
] as const;

export type CheckName = (typeof CHECK_NAMES)[number];
export type Results = Record<CheckName, CheckResult>;

export type HtmlDocument = ReturnType<typeof parseDocument>;
export type HtmlElement = ReturnType<typeof findAll>[number];

/** What the fetch learnt about the page, besides its HTML. */
export interface PageFacts {
  /** The URL the page was served from (after redirects). */
  readonly url: string;
  /** Response headers, lower-case names. */
  readonly headers: Record<string, string>;
  readonly encoding: string | null;
  /** Decompressed size (bytes). */
  readonly size: number;
  readonly loadTimeMs: number;
  /** The site's robots.txt, or null when it has none (or it could not be read). */
  readonly robotsTxt: string | null;
}

/** Bounds of the checks (the originals' defaults). */
export const LIMITS = {
  titleMax: 60,
  descriptionMax: 160,
  links: 150,
  loadTimeSeconds: 2,
  pageSize: 330_000,
  domNodes: 1_500,
} as const;

/**
 * Bounds of what a result shows, so that a large page does not make a large report: lists keep
 * their first `items` entries, texts their first `text` characters and URLs their first `url`
 * (the longest URL a report accepts). Counts and lengths are always of the whole.
 */
export const SHOWN = { items: 20, text: 256, url: 2048 } as const;

/** `value` cut at `max` UTF-16 units, never between the two halves of a surrogate pair. */
export function clip(value: string, max: number): string {
  if (value.length <= max) return value;
  const code = value.charCodeAt(max - 1);
  return value.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

export function check(
  importance: Importance,
  passed: boolean,
  value: Json,
  errors: Record<string, Json>,
): CheckResult {
  return passed ? { passed, importance, value } : { passed, importance, value, errors };
}
