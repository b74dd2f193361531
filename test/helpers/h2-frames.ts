import { once } from 'node:events';
import { connect, type TLSSocket } from 'node:tls';

/** HTTP/2 frame types and flags a raw client needs (RFC 9113 §6). */
export const FRAME = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, GOAWAY: 7 } as const;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;
const ACK = 0x1;

export interface Frame {
  readonly type: number;
  readonly flags: number;
  readonly stream: number;
  readonly payload: Buffer;
}

function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

/** A string literal of HPACK (no Huffman coding; shorter than 127 bytes). */
const literal = (s: string): Buffer => Buffer.concat([Buffer.from([s.length]), Buffer.from(s)]);

/**
 * A request's header block in HPACK, without the dynamic table: :method and :scheme from the
 * static table, :path and :authority as literals of static names, other headers as literals.
 */
function headerBlock(method: 'GET' | 'POST', path: string, headers: Record<string, string>): Buffer {
  const parts: Buffer[] = [Buffer.from([method === 'GET' ? 0x82 : 0x83, 0x87])];
  parts.push(Buffer.from([0x04]), literal(path), Buffer.from([0x01]), literal('127.0.0.1'));
  for (const [name, value] of Object.entries(headers))
    parts.push(Buffer.from([0x00]), literal(name), literal(value));
  return Buffer.concat(parts);
}

/**
 * An HTTP/2 client written frame by frame on a raw TLS socket, for what node's client never sends:
 * streams past the server's SETTINGS_MAX_CONCURRENT_STREAMS (node's client queues them), frames
 * written in one go. Every frame the server sends is kept in `frames`.
 */
export class RawH2Client {
  readonly frames: Frame[] = [];
  #pending = Buffer.alloc(0);
  #next = 1;

  private constructor(readonly socket: TLSSocket) {
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    socket.on('error', () => {}); // a server that cuts the connection is what some tests look for
  }

  /** Connects, sends the preface and empty SETTINGS, and acknowledges the server's SETTINGS. */
  static async open(port: number, ca: Buffer): Promise<RawH2Client> {
    const socket = connect({ host: '127.0.0.1', port, ca, ALPNProtocols: ['h2'], servername: 'localhost' });
    await once(socket, 'secureConnect');
    const client = new RawH2Client(socket);
    socket.write(
      Buffer.concat([
        Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
        frame(FRAME.SETTINGS, 0, 0, Buffer.alloc(0)),
      ]),
    );
    await client.until((f) => f.type === FRAME.SETTINGS && (f.flags & ACK) === 0);
    socket.write(frame(FRAME.SETTINGS, ACK, 0, Buffer.alloc(0)));
    return client;
  }

  /** HEADERS of `count` new streams, all in one write; returns their ids. */
  openStreams(
    count: number,
    method: 'GET' | 'POST',
    path: string,
    headers: Record<string, string> = {},
  ): number[] {
    const ids: number[] = [];
    const out: Buffer[] = [];
    for (let i = 0; i < count; i++) {
      const id = this.#next;
      this.#next += 2;
      ids.push(id);
      const flags = END_HEADERS | (method === 'GET' ? END_STREAM : 0);
      out.push(frame(FRAME.HEADERS, flags, id, headerBlock(method, path, headers)));
    }
    this.socket.write(Buffer.concat(out));
    return ids;
  }

  /** RST_STREAM (CANCEL) for each stream, in one write. */
  reset(ids: readonly number[], code = 0x8): void {
    const payload = (): Buffer => {
      const b = Buffer.alloc(4);
      b.writeUInt32BE(code);
      return b;
    };
    this.socket.write(Buffer.concat(ids.map((id) => frame(FRAME.RST_STREAM, 0, id, payload()))));
  }

  /** The frames the server sent on `stream`. */
  on(stream: number): Frame[] {
    return this.frames.filter((f) => f.stream === stream);
  }

  /** Resolves with the first frame (already received or to come) that `match` accepts. */
  async until(match: (f: Frame) => boolean): Promise<Frame> {
    for (;;) {
      const found = this.frames.find(match);
      if (found) return found;
      if (this.socket.destroyed) throw new Error('the connection closed first');
      await Promise.race([once(this.socket, 'data'), once(this.socket, 'close')]);
    }
  }

  close(): void {
    this.socket.destroy();
  }

  #read(chunk: Buffer): void {
    let buf = Buffer.concat([this.#pending, chunk]);
    while (buf.length >= 9) {
      const length = buf.readUIntBE(0, 3);
      if (buf.length < 9 + length) break;
      this.frames.push({
        type: buf[3]!,
        flags: buf[4]!,
        stream: buf.readUInt32BE(5) & 0x7fffffff,
        payload: buf.subarray(9, 9 + length),
      });
      buf = buf.subarray(9 + length);
    }
    this.#pending = buf;
  }
}
