import { parseDocument } from 'htmlparser2';
import * as content from './checks/content.js';
import * as page from './checks/page.js';
import * as transport from './checks/transport.js';
import type { PageFacts, Results } from './checks/types.js';

/** Runs every check over a fetched page. Pure: the HTML and what the fetch learnt in, results out. */
export function analyse(html: string, facts: PageFacts): Results {
  const doc = parseDocument(html, { lowerCaseTags: true, lowerCaseAttributeNames: true });
  return {
    title: content.title(doc),
    meta_description: content.metaDescription(doc),
    headings: content.headings(doc),
    https_encryption: transport.httpsEncryption(facts),
    meta_viewport: content.metaViewport(doc),
    charset: content.charset(doc),
    language: content.language(doc),
    favicon: content.favicon(doc, facts),
    noindex: content.noindex(doc, facts),
    in_page_links: page.inPageLinks(doc, facts),
    image_keywords: page.imageKeywords(doc, facts),
    text_compression: transport.textCompression(facts),
    load_time: transport.loadTime(facts),
    page_size: transport.pageSize(facts),
    dom_size: page.domSize(doc),
    deprecated_html_tags: page.deprecatedHtmlTags(doc),
    structured_data: content.structuredData(doc),
  };
}
