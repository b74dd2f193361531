import { once } from 'node:events';
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  readonly status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  readonly headers: Record<string, string>;
  readonly body: string;
  json(): unknown;
}

/**
 * A client on a TCP connection of its own, written the way an attacker writes: the request head,
 * then the body all at once, in chunks, a byte at a time, or never. It keeps everything the server
 * writes back; write errors once the server has closed (EPIPE, ECONNRESET) are recorded, not thrown.
 */
export class RawClient {
  #received = Buffer.alloc(0);
  #response: RawResponse | undefined;
  #waiters: { resolve: (r: RawResponse) => void; reject: (e: Error) => void }[] = [];
  /** Resolves when the connection has closed, by either side. */
  readonly closed: Promise<void>;
  /** The first socket error (usually the server closing under a body still being written). */
  error: Error | undefined;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.#received = Buffer.concat([this.#received, chunk]);
      this.#parse();
    });
    socket.on('error', (err) => (this.error ??= err));
    this.closed = once(socket, 'close').then(() => {
      this.#parse(true);
      for (const w of this.#waiters.splice(0)) {
        w.reject(
          new Error(`connection closed without a whole response (${this.error?.message ?? 'no error'})`),
        );
      }
    });
  }

  static async open(url: string): Promise<RawClient> {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    await once(socket, 'connect');
    return new RawClient(socket);
  }

  /** Writes the request head. `Host` is added; nothing else is. */
  head(method: string, path: string, headers: Record<string, string | number>): void {
    const lines = [`${method} ${path} HTTP/1.1`, 'Host: gateway.test'];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    this.write(`${lines.join('\r\n')}\r\n\r\n`);
  }

  /** Writes body bytes, unless the connection is already gone. */
  write(data: string | Buffer): void {
    if (!this.socket.destroyed && this.socket.writable) this.socket.write(data);
  }

  /** Writes one chunk of a chunked body (an empty one ends it). */
  chunk(data: string | Buffer): void {
    const bytes = Buffer.from(data);
    this.write(Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]));
  }

  /** True once a whole response has arrived. */
  get responded(): boolean {
    return this.#response !== undefined;
  }

  /** Everything received so far, as text (interim 100 Continue responses included). */
  get text(): string {
    return this.#received.toString('latin1');
  }

  /** The first final (non-1xx) response, once it has arrived whole. */
  response(): Promise<RawResponse> {
    if (this.#response) return Promise.resolve(this.#response);
    if (this.socket.destroyed) return Promise.reject(new Error('connection closed without a whole response'));
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  destroy(): void {
    this.socket.destroy();
  }

  #parse(atClose = false): void {
    if (this.#response) return;
    let offset = 0;
    for (;;) {
      const end = this.#received.indexOf('\r\n\r\n', offset);
      if (end < 0) return;
      const lines = this.#received.subarray(offset, end).toString('latin1').split('\r\n');
      const status = Number(lines[0]!.split(' ')[1]);
      if (status >= 100 && status < 200) {
        offset = end + 4;
        continue;
      }
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
      }
      const start = end + 4;
      const length = headers['content-length'];
      const available = this.#received.length - start;
      if (length !== undefined && available < Number(length)) return;
      if (length === undefined && !atClose) return;
      const body = this.#received
        .subarray(start, length === undefined ? undefined : start + Number(length))
        .toString('utf8');
      this.#response = { status, headers, body, json: () => JSON.parse(body) as unknown };
      for (const w of this.#waiters.splice(0)) w.resolve(this.#response);
      return;
    }
  }
}
