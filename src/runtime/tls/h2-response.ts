import type { OutgoingHttpHeader, OutgoingHttpHeaders } from 'node:http';
import { constants, type ServerHttp2Stream } from 'node:http2';
import { resetByGateway } from './h2-adapters.js';
import { StreamEvents } from './stream-events.js';

/**
 * Header names that are HTTP/1.1 connection framing: HTTP/2 forbids them (nghttp2 refuses a
 * response with one). Dropped as node's compatibility layer drops them: the Connection: close of
 * the gateway's refusals ends only its stream in HTTP/2. TE is allowed only as "trailers".
 */
const CONNECTION_SPECIFIC = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

const droppedHeader = (name: string, value: OutgoingHttpHeader): boolean =>
  CONNECTION_SPECIFIC.has(name) || (name === 'te' && value !== 'trailers');

/**
 * An HTTP/2 response with what the request path (src/http, src/proxy) uses of an HTTP/1.1 one,
 * written straight to its stream with the core API: headers by `stream.respond`, the body by
 * `stream.write` / `stream.end`. It replaces node's compatibility response, which also answers
 * with `waitForTrailers`: every response then ends with a frame of its own (empty trailers),
 * written apart from the body, a second socket write per response.
 *
 * Its events ('close', 'drain', 'finish', 'error') are its stream's: listeners are added to the
 * stream. `closed` and `destroyed` read the stream (the client may have reset it while the limiter
 * waited), and `writableFinished` is false for a stream the client reset, whose writable side node
 * ends (so it would read as finished): a response cut off by the client reads as unfinished, and
 * its upstream request is cancelled.
 */
export class StreamResponse extends StreamEvents {
  statusCode = 200;
  /** Headers set before writeHead (setHeader), merged into it; most responses set none. */
  #headers: OutgoingHttpHeaders | undefined;
  /** end() was called: later writes are dropped, as a response that ended takes no more. */
  #ending = false;

  get headersSent(): boolean {
    return this.stream.headersSent;
  }

  get closed(): boolean {
    return this.stream.closed || this.stream.destroyed;
  }

  get destroyed(): boolean {
    return this.stream.destroyed;
  }

  get writableFinished(): boolean {
    return this.stream.writableFinished && !this.stream.aborted;
  }

  get writableEnded(): boolean {
    return this.#ending;
  }

  /** HTTP/1.1 only: an HTTP/2 answer never closes the connection (see lingering-close.ts). */
  get req(): undefined {
    return undefined;
  }

  setHeader(name: string, value: OutgoingHttpHeader): this {
    (this.#headers ??= {})[name.toLowerCase()] = value;
    return this;
  }

  getHeader(name: string): OutgoingHttpHeader | undefined {
    return this.#headers?.[name.toLowerCase()];
  }

  hasHeader(name: string): boolean {
    return this.#headers?.[name.toLowerCase()] !== undefined;
  }

  removeHeader(name: string): void {
    if (this.#headers) delete this.#headers[name.toLowerCase()];
  }

  /** Sends the status and headers (those given win over those set before). */
  writeHead(statusCode: number, headers?: OutgoingHttpHeaders): this {
    const stream = this.stream;
    if (stream.destroyed || stream.closed) return this;
    if (stream.headersSent) throw new Error('writeHead: the response has already been initiated');
    this.statusCode = statusCode;
    const out: OutgoingHttpHeaders = {};
    const set = this.#headers;
    if (set) for (const name in set) addHeader(out, name, set[name]);
    if (headers) for (const name in headers) addHeader(out, name.toLowerCase(), headers[name]);
    out[':status'] = statusCode;
    stream.respond(out, { endStream: this.#ending });
    return this;
  }

  /** Writes body bytes, sending the headers first when none were sent. False: wait for 'drain'. */
  write(chunk: string | Uint8Array): boolean {
    const stream = this.stream;
    if (this.#ending || stream.destroyed || stream.closed) return false;
    if (!stream.headersSent) this.writeHead(this.statusCode);
    // A HEAD request's response, a 204 or a 304 ended with its headers: it has no body to write.
    if (stream.writableEnded) return true;
    return stream.write(chunk);
  }

  /** Ends the response: with no body, its HEADERS frame ends the stream; else the last DATA frame does. */
  end(chunk?: string | Uint8Array): this {
    if (this.#ending) return this;
    const stream = this.stream;
    const body = chunk !== undefined && chunk !== null && chunk.length > 0;
    this.#ending = !body; // so writeHead ends the stream when there is no body
    if (stream.destroyed || stream.closed) {
      this.#ending = true;
      return this;
    }
    if (!stream.headersSent) this.writeHead(this.statusCode);
    this.#ending = true;
    // A HEAD request's response, a 204 or a 304 ended with its headers (node sees to it).
    if (!stream.writableEnded) {
      if (body) stream.end(chunk);
      else stream.end();
    }
    // Answered before the client sent all of its body (408, 413, a refusal): node keeps a stream
    // whose body was read open until the client ends it, and with it the stream's slot and the
    // request's. RST_STREAM NO_ERROR once the answer is out (RFC 9113 §8.1) closes it.
    if (!requestEnded(stream)) stream.close(constants.NGHTTP2_NO_ERROR);
    return this;
  }

  /** 100 Continue, before the final answer: the client may now send the body it held back. */
  writeContinue(): void {
    const stream = this.stream;
    if (stream.headersSent || stream.destroyed || stream.closed) return;
    stream.additionalHeaders({ ':status': constants.HTTP_STATUS_CONTINUE });
  }

  /** The gateway cuts the response (an upstream failing mid-body): a reset of its own, not the client's. */
  destroy(error?: Error): this {
    if (!this.stream.destroyed) {
      resetByGateway.add(this.stream);
      this.stream.destroy(error);
    }
    return this;
  }
}

/** The client has ended its side of the stream: all of the request body has arrived. */
function requestEnded(stream: ServerHttp2Stream): boolean {
  // Node's readable state has no public flag for an end not yet read ('end' is emitted once read).
  return (stream as unknown as { _readableState?: { ended?: boolean } })._readableState?.ended !== false;
}

/** Adds one response header as node's compatibility layer would: connection framing dropped. */
function addHeader(out: OutgoingHttpHeaders, name: string, value: OutgoingHttpHeader | undefined): void {
  if (value === undefined || droppedHeader(name, value)) return;
  out[name] = value;
}
