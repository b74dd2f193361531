import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { errors as undiciErrors, type Dispatcher } from 'undici';
import { appendToUpstreamFields } from '../limits/rate-limit-headers.js';
import { endToEnd } from './headers.js';
import type { LiveStreams } from './live-streams.js';
import { onRequestEnd, type EndHooks } from './request-end.js';
import type { ResponseBufferLimits, ResponseBuffers } from './response-buffers.js';

export type ForwardOutcome =
  | { readonly kind: 'ok'; readonly status: number }
  | { readonly kind: 'unreachable' | 'timeout'; readonly error: Error }
  | { readonly kind: 'aborted' };

/** Sees an upstream response's status and headers before they are relayed; `strip` never reaches the client. */
export interface ResponseHook {
  readonly strip: readonly string[];
  onResponse(status: number, headers: Readonly<Record<string, string | string[] | undefined>>): void;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
// The drop tests run per upstream header of every response: the first character, then a prefix
// test, so the usual names (content-*, date, …) cost one comparison each and no string builtin.
const A = 97; // "a"
const R = 114; // "r"
const X = 120; // "x"
/**
 * Rate-limit headers are the gateway's to send: an upstream's own never reach the client, except
 * the IETF RateLimit and RateLimit-Policy Lists, which the gateway's policies are appended to.
 */
const dropGatewayHeaders = (name: string): boolean => {
  const first = name.charCodeAt(0);
  if (first === X) return name.startsWith('x-ratelimit-');
  return first === R && name.startsWith('ratelimit-') && name !== 'ratelimit-policy';
};
/** On a limited surface a success carries no Retry-After: only the gateway's 429 does. */
const dropGatewayHeadersAndRetry = (name: string) =>
  dropGatewayHeaders(name) || (name.charCodeAt(0) === R && name === 'retry-after');
/** On a CORS route the gateway decides who may read the response: the upstream's CORS headers never pass. */
const isCors = (name: string) => name.charCodeAt(0) === A && name.startsWith('access-control-');
const dropCorsAndGatewayHeaders = (name: string) => isCors(name) || dropGatewayHeaders(name);
const dropCorsAndGatewayHeadersAndRetry = (name: string) => isCors(name) || dropGatewayHeadersAndRetry(name);

/** Which upstream response headers never reach the client: on a CORS route, and when Retry-After goes too. */
export function upstreamHeaderDrop(cors: boolean, dropRetry: boolean): (name: string) => boolean {
  if (cors) return dropRetry ? dropCorsAndGatewayHeadersAndRetry : dropCorsAndGatewayHeaders;
  return dropRetry ? dropGatewayHeadersAndRetry : dropGatewayHeaders;
}

/** The upstream's Vary joined with the one the gateway set (Origin, on CORS routes), without repeating a name. */
function mergeVary(upstream: string | string[], own: string): string {
  const theirs = Array.isArray(upstream) ? upstream.join(', ') : upstream;
  const names = theirs
    .toLowerCase()
    .split(',')
    .map((n) => n.trim());
  if (names.includes('*')) return '*';
  const missing = own.split(',').filter((n) => !names.includes(n.trim().toLowerCase()));
  return missing.length === 0 ? theirs : `${theirs}, ${missing.map((n) => n.trim()).join(', ')}`;
}

/** A last chunk this small goes out with end(): far below a socket's 16 KiB high-water mark. */
const SMALL_CHUNK = 4096;

/** Bytes of a response still waiting in its socket (HTTP/1.1) or HTTP/2 stream: the client has not read them yet. */
function unsent(res: ServerResponse): number {
  const sink = (res as { stream?: { writableLength: number } }).stream ?? res.socket;
  return sink?.writableLength ?? 0;
}

/**
 * An undici dispatch handler that writes the upstream's response straight into the client's
 * response, with back-pressure, and cancels the upstream request when the request ends before the
 * response did (the client left, its stream was reset, its pipelined connection dropped).
 * Cheaper than `stream()`: no Writable pipeline and no AbortController per request.
 *
 * The write deadline: a response the client does not read (socket buffer full, HTTP/2 window at
 * zero) for `responseTimeout` is cut and its upstream request aborted, so a parked reader never
 * holds an upstream connection for long. The timer runs only while writes wait.
 *
 * A client that falls behind first gets a share of the response buffers: up to that share the
 * upstream's bytes are taken ahead of the client, so a response that fits frees its upstream
 * connection at once and only waits on the client within the deadline. Past the share (or with the
 * budget spent) the upstream waits on the client.
 */
export class ResponseRelay implements Dispatcher.DispatchHandler {
  readonly done: Promise<ForwardOutcome>;
  #settle!: (outcome: ForwardOutcome) => void;
  #controller: Dispatcher.DispatchController | undefined;
  #clientGone = false;
  #status = 0;
  /** Set while the response is a tracked event stream: untracks it. */
  #untrack: (() => void) | undefined;
  #endedForShutdown = false;
  #ended = false;
  /** Armed while the client is not taking the response's bytes. */
  #stall: NodeJS.Timeout | undefined;
  /** The buffer share this response holds while its client is behind (0: none). */
  #held = 0;
  // Listeners made on first use: most responses never wait on their client.
  #drainListener: (() => void) | undefined;
  #giveShareListener: (() => void) | undefined;
  /** Body bytes the upstream's Content-Length still announces; -1 when it sent none. */
  #bodyLeft = -1;

  constructor(
    req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly responseTimeout: number,
    private readonly extraHeaders: Record<string, string>,
    private readonly requestId: string,
    private readonly liveStreams?: LiveStreams,
    private readonly cors = false,
    private readonly buffers?: ResponseBuffers,
    private readonly bufferLimits?: ResponseBufferLimits,
    private readonly hook?: ResponseHook,
    ends?: EndHooks,
  ) {
    this.done = new Promise((resolve) => (this.#settle = resolve));
    onRequestEnd(req, res, this.#onRequestEnd, ends);
  }

  #onRequestEnd = (): void => {
    clearTimeout(this.#stall);
    if (this.#ended || this.res.writableFinished) return;
    this.#clientGone = true;
    this.#controller?.abort(new undiciErrors.RequestAbortedError());
  };

  #waitForClient(): void {
    this.#stall ??= setTimeout(() => this.#onStall(), this.responseTimeout);
  }

  /** No write progress for responseTimeout: the upstream request is aborted and the response cut. */
  #onStall(): void {
    if (!this.#ended) {
      this.#clientGone = true;
      this.#controller?.abort(new undiciErrors.RequestAbortedError());
    }
    // With an error: an HTTP/2 client sees INTERNAL_ERROR, not a stream that merely ended.
    this.res.destroy(new Error('response timeout: the client took no bytes'));
  }

  #onDrain(): void {
    clearTimeout(this.#stall);
    this.#stall = undefined;
    this.#controller?.resume();
  }

  /** Holds a buffer share while the client is behind: true when this response has one. */
  #holdShare(): boolean {
    if (this.#held > 0) return true;
    const limits = this.bufferLimits;
    if (!this.buffers || !limits || !this.buffers.take(limits.perResponse, limits.total)) return false;
    this.#held = limits.perResponse;
    const give = (this.#giveShareListener ??= () => this.#giveShare());
    this.res.once('drain', give);
    this.res.once('close', give);
    return true;
  }

  /** The client caught up, or the response is over: the share goes back, and so does the deadline. */
  #giveShare(): void {
    if (this.#held === 0) return;
    this.buffers!.give(this.#held);
    this.#held = 0;
    this.res.off('drain', this.#giveShareListener!);
    this.res.off('close', this.#giveShareListener!);
    clearTimeout(this.#stall);
    this.#stall = undefined;
  }

  /** Shutdown: end the stream cleanly for the client (it reconnects elsewhere) and drop the upstream side. */
  #endForShutdown(): void {
    this.#endedForShutdown = true;
    this.res.end();
    this.#controller?.abort(new undiciErrors.RequestAbortedError());
  }

  #finish(outcome: ForwardOutcome): void {
    this.#ended = true;
    this.#untrack?.();
    this.#settle(outcome);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#clientGone) controller.abort(new undiciErrors.RequestAbortedError());
  }

  onResponseStart(
    _c: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (statusCode < 200) return; // informational: Node answers 100-continue itself
    this.#status = statusCode;
    const limited = 'x-ratelimit-limit' in this.extraHeaders;
    const dropRetry = limited && statusCode < 300;
    const out: OutgoingHttpHeaders = endToEnd(
      headers,
      upstreamHeaderDrop(this.cors, dropRetry),
      this.hook?.strip,
    );
    this.hook?.onResponse(statusCode, headers);
    for (const name in this.extraHeaders) out[name] = this.extraHeaders[name];
    if ('ratelimit' in out) appendToUpstreamFields(out, headers, this.extraHeaders);
    // writeHead would let the upstream's Vary replace the one the gateway set: keep both.
    const ownVary = this.res.getHeader('vary');
    if (typeof ownVary === 'string' && out['vary'] !== undefined) {
      out['vary'] = mergeVary(out['vary'] as string | string[], ownVary);
    }
    out['x-request-id'] = this.requestId; // the id the upstream was given, not one it chose
    this.res.writeHead(statusCode, out);
    const length = headers['content-length'];
    if (typeof length === 'string') this.#bodyLeft = Number(length);
    const type = headers['content-type'];
    if (this.liveStreams && typeof type === 'string' && type.startsWith('text/event-stream')) {
      // A closure only for event streams: other responses allocate nothing for this.
      this.#untrack = this.liveStreams.add(() => this.#endForShutdown());
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const left = (this.#bodyLeft -= chunk.length);
    // The chunk that completes a small body, with nothing queued before it: one end(chunk), not
    // write + end (Node corks a write and uncorks it on a nextTick). The write could not have
    // filled the socket's buffer, so no share or pause is skipped.
    if (left === 0 && chunk.length <= SMALL_CHUNK && unsent(this.res) === 0) {
      this.res.end(chunk);
      return;
    }
    if (this.res.write(chunk)) return;
    this.#waitForClient();
    if (this.#holdShare() && unsent(this.res) <= this.#held) return;
    controller.pause();
    this.res.once('drain', (this.#drainListener ??= () => this.#onDrain()));
  }

  onResponseEnd(): void {
    if (!this.res.writableEnded) this.res.end();
    // The upstream is done; the client must still take the last bytes within the deadline.
    if (unsent(this.res) > 0) this.#waitForClient();
    this.#finish({ kind: 'ok', status: this.#status });
  }

  onResponseError(_c: Dispatcher.DispatchController, error: Error & { code?: string }): void {
    if (this.#clientGone) return this.#finish({ kind: 'aborted' });
    if (this.#endedForShutdown) return this.#finish({ kind: 'ok', status: this.#status });
    // A failure mid-body: the client must not mistake a truncated response for a whole one.
    if (this.res.headersSent) this.res.destroy(error);
    this.#finish({ kind: TIMEOUT_CODES.has(error.code ?? '') ? 'timeout' : 'unreachable', error });
  }
}
