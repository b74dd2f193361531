import { once } from 'node:events';
import { connect, type Socket } from 'node:net';

export interface WarmReply {
  readonly status: number;
  /** Lower-case names. */
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * A keep-alive connection the server has already accepted and served once (GET /healthz), so a
 * request written on it is read at once. A burst of new connections is accepted one per event-loop
 * turn; a burst on established connections arrives together, as load from many clients does.
 */
export class WarmConnection {
  private constructor(private readonly socket: Socket) {}

  static async open(url: string): Promise<WarmConnection> {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    await once(socket, 'connect');
    socket.write('GET /healthz HTTP/1.1\r\nHost: gateway.test\r\n\r\n');
    let received = '';
    while (!received.endsWith('{"status":"ok"}')) {
      const [chunk] = (await once(socket, 'data')) as [Buffer];
      received += chunk.toString('latin1');
    }
    return new WarmConnection(socket);
  }

  /** Writes one GET (the last on this connection) and resolves its reply once the server closes. */
  get(path: string): Promise<WarmReply> {
    const chunks: Buffer[] = [];
    this.socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const closed = once(this.socket, 'close');
    this.socket.write(`GET ${path} HTTP/1.1\r\nHost: gateway.test\r\nConnection: close\r\n\r\n`);
    return closed.then(() => {
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      return { status: Number(statusLine!.split(' ')[1]), headers, body: text.slice(end + 4) };
    });
  }

  destroy(): void {
    this.socket.destroy();
  }
}
