import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { send, type Reply } from './gateway.js';

/**
 * Pages for the analyser, built to pass or fail given checks (the expected results sit next to
 * them in the tests), plus the pages a fetch must refuse. Over http, so https_encryption always fails.
 */

/** Passes every check but https: score 92, good. */
export const GOOD_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Good page</title>
  <meta name="description" content="A page built to pass the checks.">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="icon" href="/favicon.ico">
  <script type="application/ld+json">{"@context":"https://schema.org","@type":"WebPage"}</script>
</head>
<body>
  <h1>Welcome</h1>
  <h2>Details</h2>
  <p><a href="/about">About</a> <a href="https://example.com/">Example</a> <a href="#top">Top</a></p>
  <img src="/logo.png" alt="Logo">
</body>
</html>`;

/** Fails https, meta_description, headings (two h1), favicon, image_keywords, deprecated tags: 66, decent. */
export const DECENT_PAGE = `<!doctype html>
<html lang="de">
<head>
  <meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">
  <title>Decent page</title>
  <meta name="viewport" content="width=device-width">
  <meta property="og:title" content="Decent page">
</head>
<body>
  <h1>First</h1>
  <h1>Second</h1>
  <center><a href="/a">A</a></center>
  <img src="/one.png">
  <img src="two.png" alt="">
  <img src="/three.png" alt="Three">
</body>
</html>`;

/** Passes only in_page_links, robots, load_time, page_size and dom_size: 26, bad. */
export const BAD_PAGE = `<html>
<head>
  <meta name="robots" content="noindex, nofollow">
</head>
<body>
  <h2>No title, no h1</h2>
  <font color="red">Old</font>
  <img src="/x.png">
  <a href="http://elsewhere.example/">Out</a>
</body>
</html>`;

/**
 * About 4.8 MB of HTML, under the 5 MB limit, that takes seconds to analyse: 36,000 sections, each a
 * heading, a link and an image without alt text (served gzipped, so its transfer is quick).
 */
export const LARGE_SECTIONS = 36_000;
let largePage: { html: string; gzipped: Buffer } | undefined;
export function largePageHtml(): string {
  return largePageBodies().html;
}
function largePageBodies(): { html: string; gzipped: Buffer } {
  if (!largePage) {
    const sections: string[] = [];
    for (let i = 0; i < LARGE_SECTIONS; i++) {
      sections.push(
        `<div class="section"><h2>Section ${i} of the large page</h2><p><a href="/p/${i}">Read ${i}</a> <img src="/img/${i}.png"></p></div>\n`,
      );
    }
    const html = `<!doctype html><html lang="en"><head><title>Large page</title></head><body><h1>Large</h1>\n${sections.join('')}</body></html>`;
    largePage = { html, gzipped: gzipSync(html) };
  }
  return largePage;
}

const HUGE = 6 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'a');

export class TestPages {
  #server: Server;
  #flips = 0;
  readonly #served = new EventEmitter();
  readonly #timers = new Set<NodeJS.Timeout>();

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<TestPages> {
    const pages: TestPages = new TestPages(createServer((req, res) => pages.#handle(req, res)));
    pages.#server.listen(0, '127.0.0.1');
    await once(pages.#server, 'listening');
    return pages;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** Resolves once a response to `path` has been written out in full. */
  whenServed(path: string): Promise<unknown> {
    return once(this.#served, path);
  }

  /** http://127.0.0.1:<port><path> */
  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  async close(): Promise<void> {
    for (const t of this.#timers) clearTimeout(t);
    this.#server.closeAllConnections();
    await new Promise((r) => this.#server.close(r));
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://pages');
    const path = url.pathname;
    res.on('finish', () => this.#served.emit(path));
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const html = (body: string, encoding: 'gzip' | 'br' | null, type = 'text/html; charset=utf-8') => {
      const raw = Buffer.from(body, type.includes('iso-8859-1') ? 'latin1' : 'utf8');
      const sent = encoding === 'gzip' ? gzipSync(raw) : encoding === 'br' ? brotliCompressSync(raw) : raw;
      res.writeHead(200, {
        'content-type': type,
        'content-length': sent.length,
        ...(encoding ? { 'content-encoding': encoding } : {}),
      });
      res.end(sent);
    };
    const redirect = (to: string, status = 302) => {
      res.writeHead(status, { location: to });
      res.end();
    };

    if (path === '/good') return html(GOOD_PAGE, gzip ? 'gzip' : null);
    if (path === '/good.br') return html(GOOD_PAGE, 'br');
    if (path === '/decent') return html(DECENT_PAGE, gzip ? 'gzip' : null, 'text/html; charset=iso-8859-1');
    if (path === '/bad') return html(BAD_PAGE, null);
    if (path === '/large') {
      const { gzipped } = largePageBodies();
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-length': gzipped.length,
        'content-encoding': 'gzip',
      });
      return void res.end(gzipped);
    }
    // The bad page, then the good one, in turn: a report analysed again changes.
    if (path === '/flip') return this.#flips++ % 2 === 0 ? html(BAD_PAGE, null) : html(GOOD_PAGE, null);
    if (path === '/text') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return void res.end('plain text');
    }
    const status = /^\/status\/(\d{3})$/.exec(path);
    if (status) {
      res.writeHead(Number(status[1]), { 'content-type': 'text/html' });
      return void res.end('<h1>error</h1>');
    }
    // Two pages that redirect to each other.
    if (path === '/loop/a') return redirect('/loop/b');
    if (path === '/loop/b') return redirect('/loop/a', 301);
    // /chain/N redirects N times, then serves the good page.
    const chain = /^\/chain\/(\d+)$/.exec(path);
    if (chain) {
      const n = Number(chain[1]);
      return n === 0 ? html(GOOD_PAGE, gzip ? 'gzip' : null) : redirect(`/chain/${n - 1}`);
    }
    if (path === '/redirect') return redirect(url.searchParams.get('to') ?? '/good');
    if (path === '/huge') return this.#huge(res, false);
    if (path === '/huge-declared') return this.#huge(res, true);
    if (path === '/gzip-bomb') {
      const bomb = gzipSync(Buffer.alloc(HUGE, ' '));
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      return void res.end(bomb);
    }
    if (path === '/slow') {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        html(GOOD_PAGE, null);
      }, 5_000);
      this.#timers.add(timer);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/html' });
    res.end('<h1>not found</h1>');
  }

  /** 6 MB of HTML, announced or chunked; written as fast as the client reads. */
  #huge(res: ServerResponse, declared: boolean): void {
    res.writeHead(200, { 'content-type': 'text/html', ...(declared ? { 'content-length': HUGE } : {}) });
    let sent = 0;
    const write = () => {
      while (sent < HUGE) {
        sent += CHUNK.length;
        if (!res.write(CHUNK)) return void res.once('drain', write);
      }
      res.end();
    };
    res.on('error', () => undefined);
    write();
  }
}

/**
 * The exact results of each page, served from `base` (http://host:port) with `encoding`.
 * `loadTime` is the load_time value (expect.any(Number) in integration tests).
 */
export function goodResults(
  base: string,
  path = '/good',
  encoding: string | null = 'gzip',
  loadTime: unknown = 0,
) {
  return {
    title: { passed: true, importance: 'high', value: 'Good page' },
    meta_description: { passed: true, importance: 'high', value: 'A page built to pass the checks.' },
    headings: { passed: true, importance: 'high', value: { h1: ['Welcome'], h2: ['Details'] } },
    https_encryption: {
      passed: false,
      importance: 'high',
      value: `${base}${path}`,
      errors: { missing: null },
    },
    meta_viewport: { passed: true, importance: 'medium', value: 'width=device-width, initial-scale=1' },
    charset: { passed: true, importance: 'medium', value: 'utf-8' },
    language: { passed: true, importance: 'medium', value: 'en' },
    favicon: { passed: true, importance: 'low', value: `${base}/favicon.ico` },
    noindex: { passed: true, importance: 'high', value: null },
    robots: { passed: true, importance: 'high', value: null },
    in_page_links: { passed: true, importance: 'medium', value: { internal: 1, external: 1 } },
    image_keywords: { passed: true, importance: 'medium', value: 1 },
    text_compression: { passed: true, importance: 'medium', value: encoding },
    load_time: { passed: true, importance: 'medium', value: loadTime },
    page_size: { passed: true, importance: 'medium', value: Buffer.byteLength(GOOD_PAGE) },
    dom_size: { passed: true, importance: 'low', value: 16 },
    deprecated_html_tags: { passed: true, importance: 'low', value: {} },
    structured_data: { passed: true, importance: 'low', value: { json_ld: 1, microdata: 0, open_graph: 0 } },
  };
}

export function decentResults(base: string, loadTime: unknown = 0) {
  return {
    title: { passed: true, importance: 'high', value: 'Decent page' },
    meta_description: { passed: false, importance: 'high', value: null, errors: { missing: null } },
    headings: {
      passed: false,
      importance: 'high',
      value: { h1: ['First', 'Second'] },
      errors: { too_many: 2 },
    },
    https_encryption: {
      passed: false,
      importance: 'high',
      value: `${base}/decent`,
      errors: { missing: null },
    },
    meta_viewport: { passed: true, importance: 'medium', value: 'width=device-width' },
    charset: { passed: true, importance: 'medium', value: 'iso-8859-1' },
    language: { passed: true, importance: 'medium', value: 'de' },
    favicon: { passed: false, importance: 'low', value: null, errors: { missing: null } },
    noindex: { passed: true, importance: 'high', value: null },
    robots: { passed: true, importance: 'high', value: null },
    in_page_links: { passed: true, importance: 'medium', value: { internal: 1, external: 0 } },
    image_keywords: {
      passed: false,
      importance: 'medium',
      value: 3,
      errors: { missing: [`${base}/one.png`, `${base}/two.png`] },
    },
    text_compression: { passed: true, importance: 'medium', value: 'gzip' },
    load_time: { passed: true, importance: 'medium', value: loadTime },
    page_size: { passed: true, importance: 'medium', value: Buffer.byteLength(DECENT_PAGE, 'latin1') },
    dom_size: { passed: true, importance: 'low', value: 14 },
    deprecated_html_tags: {
      passed: false,
      importance: 'low',
      value: { center: 1 },
      errors: { deprecated: ['center'] },
    },
    structured_data: { passed: true, importance: 'low', value: { json_ld: 0, microdata: 0, open_graph: 1 } },
  };
}

export function badResults(base: string, loadTime: unknown = 0) {
  return {
    title: { passed: false, importance: 'high', value: null, errors: { missing: null } },
    meta_description: { passed: false, importance: 'high', value: null, errors: { missing: null } },
    headings: {
      passed: false,
      importance: 'high',
      value: { h2: ['No title, no h1'] },
      errors: { missing: null },
    },
    https_encryption: { passed: false, importance: 'high', value: `${base}/bad`, errors: { missing: null } },
    meta_viewport: { passed: false, importance: 'medium', value: null, errors: { missing: null } },
    charset: { passed: false, importance: 'medium', value: null, errors: { missing: null } },
    language: { passed: false, importance: 'medium', value: null, errors: { missing: null } },
    favicon: { passed: false, importance: 'low', value: null, errors: { missing: null } },
    noindex: {
      passed: false,
      importance: 'high',
      value: 'noindex, nofollow',
      errors: { noindex: 'noindex, nofollow' },
    },
    robots: { passed: true, importance: 'high', value: null },
    in_page_links: { passed: true, importance: 'medium', value: { internal: 0, external: 1 } },
    image_keywords: {
      passed: false,
      importance: 'medium',
      value: 1,
      errors: { missing: [`${base}/x.png`] },
    },
    text_compression: { passed: false, importance: 'medium', value: null, errors: { missing: null } },
    load_time: { passed: true, importance: 'medium', value: loadTime },
    page_size: { passed: true, importance: 'medium', value: Buffer.byteLength(BAD_PAGE) },
    dom_size: { passed: true, importance: 'low', value: 8 },
    deprecated_html_tags: {
      passed: false,
      importance: 'low',
      value: { font: 1 },
      errors: { deprecated: ['font'] },
    },
    structured_data: {
      passed: false,
      importance: 'low',
      value: { json_ld: 0, microdata: 0, open_graph: 0 },
      errors: { missing: null },
    },
  };
}

/** Requests to the reports API through the gateway (Host: analyzer.localhost), with an API key. */
export function analyzerApi(gatewayUrl: string) {
  return (
    method: string,
    path: string,
    options: { key?: string | null; form?: Record<string, string>; json?: unknown } = {},
  ): Promise<Reply> => {
    const headers: Record<string, string> = { host: 'analyzer.localhost', accept: 'application/json' };
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    let body: string | undefined;
    if (options.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    } else if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    }
    return send(`${gatewayUrl}${path}`, { method, headers, body });
  };
}
