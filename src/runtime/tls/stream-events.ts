import type { ServerHttp2Stream } from 'node:http2';

type Listener = (...args: unknown[]) => void;

/**
 * The events of an HTTP/2 request or response served on a core stream (StreamRequest,
 * StreamResponse) are its stream's: a listener is added to, or taken off, the stream itself, so
 * the request path sees 'close', 'error', 'data' and 'drain' as it would on node's objects.
 */
export class StreamEvents {
  constructor(readonly stream: ServerHttp2Stream) {}

  on(event: string, listener: Listener): this {
    this.stream.on(event, listener);
    return this;
  }

  once(event: string, listener: Listener): this {
    this.stream.once(event, listener);
    return this;
  }

  off(event: string, listener: Listener): this {
    this.stream.off(event, listener);
    return this;
  }

  removeListener(event: string, listener: Listener): this {
    return this.off(event, listener);
  }
}
