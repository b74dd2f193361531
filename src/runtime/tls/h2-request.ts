import type { IncomingHttpHeaders } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { StreamRequestBody } from '../../proxy/stream-request.js';
import { http1Headers } from './h2-adapters.js';
import { StreamEvents } from './stream-events.js';

/** Event-loop turns ended since start: a request born in an earlier one has had its frames read. */
let turn = 0;
let turnEnding = false;
let waiting: { promise: Promise<void>; resolve: () => void } | undefined;

/** One immediate per turn that has new streams, shared by all of them (10 streams in one read: one). */
function endTurnSoon(): void {
  if (turnEnding) return;
  turnEnding = true;
  setImmediate(endTurn);
}

function endTurn(): void {
  turnEnding = false;
  turn++;
  const w = waiting;
  waiting = undefined;
  w?.resolve();
}

const ignore = (): void => {};

/**
 * An HTTP/2 request served on its core stream, with exactly what the request path (src/http,
 * src/proxy) reads of an HTTP/1.1 one: no compatibility request (a Readable fed from the stream)
 * per stream. Its headers are HTTP/1.1's (http1Headers: pseudo-headers out, :authority as Host, a
 * body without Content-Length announced as chunked); `socket` is the connection's TLS socket, the
 * same for every stream, so the peer is worked out once per connection.
 *
 * The body is the stream's readable side, read in place: its events ('data', 'end', 'close',
 * 'error') are the stream's, and `read`, `resume`, `readableLength`, `readableFlowing`,
 * `readableEnded`, `destroyed` read it. A body the client ended with the frames read with its
 * HEADERS is taken whole from the stream's buffer (wholeBody), with no listener or timer; its 'end'
 * then comes when the stream closes. Trailers are ignored (no listener).
 */
export class StreamRequest extends StreamEvents implements StreamRequestBody {
  readonly httpVersionMajor = 2;
  readonly httpVersionMinor = 0;
  readonly httpVersion = '2.0';
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly #turn = turn;
  #body: Readable | undefined;

  constructor(
    stream: ServerHttp2Stream,
    h2Headers: IncomingHttpHeaders,
    /** The connection's TLS socket (node's own `session.socket` is a proxy). */
    readonly socket: Socket,
  ) {
    super(stream);
    this.method = h2Headers[':method'] as string;
    this.url = h2Headers[':path'] as string;
    this.headers = http1Headers(h2Headers, stream.endAfterHeaders);
    // A client's RST_STREAM with an error code destroys the stream with an error: 'error' with no
    // listener would throw (the compatibility request used to listen). Its 'close' ends the request.
    stream.on('error', ignore);
    endTurnSoon();
  }

  get destroyed(): boolean {
    return this.stream.destroyed;
  }

  get readableEnded(): boolean {
    return this.stream.readableEnded;
  }

  get readableFlowing(): boolean | null {
    return this.stream.readableFlowing;
  }

  get readableLength(): number {
    return this.stream.readableLength;
  }

  read(): unknown {
    return this.stream.read();
  }

  resume(): this {
    this.stream.resume();
    return this;
  }

  framesRead(): Promise<void> | undefined {
    if (this.#turn !== turn) return undefined;
    if (!waiting) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      waiting = { promise, resolve };
    }
    return waiting.promise;
  }

  wholeBody(limit: number): Buffer | undefined {
    const stream = this.stream;
    // `ended`: the client's END_STREAM arrived, so all of the body is in the buffer (nghttp2 has
    // checked it against a Content-Length). Node's readable state has no public flag for it.
    const state = (stream as unknown as { _readableState?: { ended?: boolean } })._readableState;
    if (state?.ended !== true || stream.readableFlowing || stream.destroyed) return undefined;
    const length = stream.readableLength;
    if (length > limit) return undefined;
    // Exactly the bytes buffered, not past them: the end is not read yet, so 'end' comes when
    // the stream closes. Node then waits for the response's last write before destroying the
    // stream; had 'end' been emitted, the stream would be destroyed first, and Node 20 makes an
    // ERR_STREAM_DESTROYED (stack trace and all, ~40k instructions) for that write's completion.
    return length === 0 ? Buffer.alloc(0) : (stream.read(length) as Buffer);
  }

  bodyStream(): Readable {
    if (this.#body) return this.#body;
    const stream = this.stream;
    const body = new Readable({ read: () => void stream.resume() });
    stream.on('data', (chunk: Buffer) => {
      if (!body.push(chunk)) stream.pause();
    });
    stream.once('end', () => body.push(null));
    // Reset mid-body: the body ends short (no error: nobody may be listening any more).
    stream.once('close', () => {
      if (!stream.readableEnded) body.destroy();
    });
    this.#body = body;
    return body;
  }
}
