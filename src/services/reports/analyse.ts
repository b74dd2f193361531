import { parseDocument } from 'htmlparser2';
import * as content from './checks/content.js';
import { collectTags } from './checks/dom.js';
import * as page from './checks/page.js';
import { robots } from './checks/robots.js';
import * as transport from './checks/transport.js';
import type { PageFacts, Results } from './checks/types.js';

/**
 * Runs every check over a fetched page. Pure: the HTML and what the fetch learnt in, results out.
 * CPU-bound (a 5 MB page takes seconds): the service runs it in a worker thread (analysis-pool.ts).
 */
export function analyse(html: string, facts: PageFacts): Results {
  const tags = collectTags(parseDocument(html, { lowerCaseTags: true, lowerCaseAttributeNames: true }));
  return {
    title: content.title(tags),
    meta_description: content.metaDescription(tags),
    headings: content.headings(tags),
    https_encryption: transport.httpsEncryption(facts),
    meta_viewport: content.metaViewport(tags),
    charset: content.charset(tags),
    language: content.language(tags),
    favicon: content.favicon(tags, facts),
    noindex: content.noindex(tags, facts),
    robots: robots(facts.robotsTxt, facts.url),
    in_page_links: page.inPageLinks(tags, facts),
    image_keywords: page.imageKeywords(tags, facts),
    text_compression: transport.textCompression(facts),
    load_time: transport.loadTime(facts),
    page_size: transport.pageSize(facts),
    dom_size: page.domSize(tags),
    deprecated_html_tags: page.deprecatedHtmlTags(tags),
    structured_data: content.structuredData(tags),
  };
}
