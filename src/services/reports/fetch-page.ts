/** Fetching a page for a report: redirects followed, every address guarded, the body bounded and decoded. */
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { Agent, request, type Dispatcher } from 'undici';
import { guardedAddresses, guardedLookup, type AddressGuard } from './address-policy.js';
import { errorCode, failureMessage, failureReason, FetchFailure } from './fetch-failure.js';

export interface FetchSettings {
  /** Over the whole fetch, redirects and body included (ms). */
  readonly timeout: number;
  readonly maxRedirects: number;
  /** Largest body, compressed as sent and decompressed (bytes). */
  readonly maxSize: number;
}

export interface FetchedPage {
  /** The URL the page was finally served from, after redirects. */
  readonly url: string;
  /** Response headers, lower-case names. */
  readonly headers: Record<string, string>;
  readonly html: string;
  /** Content-Encoding of the response (gzip, br…), or null when sent uncompressed. */
  readonly encoding: string | null;
  /** Decompressed size of the document (bytes). */
  readonly size: number;
  /** From the first request to the last byte of the body (ms). */
  readonly loadTimeMs: number;
}

const HTML_TYPES = ['text/html', 'application/xhtml+xml'];
const USER_AGENT = 'Mozilla/5.0 (compatible; tollgate-analyzer/1.0)';

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const brotli = promisify(zlib.brotliDecompress);

/** A slow resolver must not outlast the fetch's deadline. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/** Drops a body not read (undici reports the abort as an error: nobody is waiting for it). */
function discard(res: Dispatcher.ResponseData): void {
  res.body.on('error', () => undefined);
  res.body.destroy();
}

function headerMap(headers: Dispatcher.ResponseData['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** The charset of the Content-Type header, else of a <meta> near the top, else UTF-8. */
function decodeHtml(body: Buffer, contentType: string): string {
  const declared =
    /charset\s*=\s*["']?([\w.:-]+)/i.exec(contentType)?.[1] ??
    /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(body.subarray(0, 2048).toString('latin1'))?.[1];
  try {
    return new TextDecoder(declared ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

async function decompress(body: Buffer, encoding: string | null, maxSize: number): Promise<Buffer> {
  const options = { maxOutputLength: maxSize };
  try {
    switch (encoding) {
      case null:
      case 'identity':
        return body;
      case 'gzip':
      case 'x-gzip':
        return await gunzip(body, options);
      case 'deflate':
        return await inflate(body, options);
      case 'br':
        return await brotli(body, options);
      default:
        throw new FetchFailure('decode', '');
    }
  } catch (err) {
    if (errorCode(err) === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError)
      throw new FetchFailure('too_large', '');
    throw new FetchFailure('decode', '');
  }
}

/** A final answer that is not 2xx. */
class StatusFailure extends FetchFailure {
  constructor(readonly status: number) {
    super('status', '');
  }
}

/**
 * Fetches pages for analysis with undici: redirects followed here, hop by hop (each hop's host
 * checked before its request), one deadline over the whole fetch, and the size bounded while
 * reading. Failures are FetchFailure with the message the client reads.
 */
export class PageFetcher {
  readonly #agent: Agent;

  constructor(
    private readonly settings: FetchSettings,
    /** Absent: any address may be fetched (services.reports.allowPrivateNetworks). */
    private readonly guard?: AddressGuard,
  ) {
    this.#agent = new Agent({
      connect: { timeout: settings.timeout, ...(guard ? { lookup: guardedLookup(guard) } : {}) },
      headersTimeout: settings.timeout,
      bodyTimeout: settings.timeout,
      keepAliveTimeout: 1_000,
    });
  }

  async fetch(url: string): Promise<FetchedPage> {
    const signal = AbortSignal.timeout(this.settings.timeout);
    const started = performance.now();
    try {
      const got = await this.#follow(new URL(url), signal, PAGE);
      return {
        url: got.url,
        headers: got.headers,
        html: decodeHtml(got.body, got.headers['content-type'] ?? ''),
        encoding: got.encoding === 'identity' ? null : got.encoding,
        size: got.body.length,
        loadTimeMs: performance.now() - started,
      };
    } catch (err) {
      const reason = err instanceof FetchFailure ? err.reason : failureReason(err, signal);
      const status = err instanceof StatusFailure ? err.status : 0;
      throw new FetchFailure(reason, failureMessage(reason, this.settings, status));
    }
  }

  /**
   * The robots.txt of the page's origin (as crawlers read it: redirects followed, any type, the
   * at most 500 KiB), or null when the site has none or it cannot be read: then nothing is disallowed.
   */
  async robotsTxt(pageUrl: string): Promise<string | null> {
    const signal = AbortSignal.timeout(this.settings.timeout);
    try {
      const got = await this.#follow(new URL('/robots.txt', pageUrl), signal, ROBOTS);
      return new TextDecoder('utf-8').decode(got.body);
    } catch {
      return null;
    }
  }

  close(): Promise<void> {
    return this.#agent.close();
  }

  async #follow(start: URL, signal: AbortSignal, kind: Kind): Promise<Fetched> {
    const maxSize = kind.maxSize ?? this.settings.maxSize;
    let current = start;
    for (let hop = 0; ; hop++) {
      if (this.guard) await untilAborted(guardedAddresses(this.guard, current.hostname), signal);
      const res = await request(current, {
        method: 'GET',
        dispatcher: this.#agent,
        signal,
        headers: {
          'user-agent': USER_AGENT,
          accept: kind.accept,
          'accept-encoding': 'gzip, br',
        },
      });
      const headers = headerMap(res.headers);
      if (res.statusCode >= 300 && res.statusCode < 400 && headers.location) {
        discard(res);
        if (hop >= this.settings.maxRedirects) throw new FetchFailure('redirects', '');
        current = new URL(headers.location, current);
        if (current.protocol !== 'http:' && current.protocol !== 'https:') {
          throw new FetchFailure('bad_redirect', '');
        }
        // Credentials in a redirect target are neither sent nor shown in the report.
        current.username = '';
        current.password = '';
        continue;
      }
      if (res.statusCode < 200 || res.statusCode >= 300) {
        discard(res);
        throw new StatusFailure(res.statusCode);
      }
      const contentType = headers['content-type'] ?? '';
      if (kind.types && !kind.types.includes(contentType.split(';')[0]!.trim().toLowerCase())) {
        discard(res);
        throw new FetchFailure('not_html', '');
      }
      const body = await readBody(res, headers, maxSize);
      const encoding = headers['content-encoding']?.trim().toLowerCase() || null;
      return { url: current.href, headers, body: await decompress(body, encoding, maxSize), encoding };
    }
  }
}

/** What is fetched: the page (HTML only), or a robots.txt (any type, at most 500 KiB). */
interface Kind {
  readonly accept: string;
  /** The media types accepted; null: any. */
  readonly types: readonly string[] | null;
  /** undefined: the settings' maxSize. */
  readonly maxSize?: number;
}

const PAGE: Kind = { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8', types: HTML_TYPES };
const ROBOTS: Kind = { accept: 'text/plain,*/*;q=0.8', types: null, maxSize: 500 * 1024 };

/** A 2xx answer's final URL, headers and decompressed body. */
interface Fetched {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  readonly encoding: string | null;
}

async function readBody(
  res: Dispatcher.ResponseData,
  headers: Record<string, string>,
  maxSize: number,
): Promise<Buffer> {
  const declared = Number(headers['content-length']);
  if (Number.isFinite(declared) && declared > maxSize) {
    discard(res);
    throw new FetchFailure('too_large', '');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxSize) {
      discard(res);
      throw new FetchFailure('too_large', '');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
