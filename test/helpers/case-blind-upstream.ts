import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * An upstream that reads the method case-insensitively, as Laravel and Symfony do: `post` is served
 * as POST. Node's own HTTP server refuses such a request line, so this one reads HTTP/1.1 by hand:
 * one request per connection (a Content-Length body at most), answered 200 with Connection: close.
 * `served` has each request's method as it arrived, and its path.
 */
export class CaseBlindUpstream {
  readonly served: { readonly method: string; readonly path: string }[] = [];
  readonly #sockets = new Set<Socket>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<CaseBlindUpstream> {
    const upstream: CaseBlindUpstream = new CaseBlindUpstream(
      createServer((socket) => upstream.#serve(socket)),
    );
    upstream.server.listen(0, '127.0.0.1');
    await once(upstream.server, 'listening');
    return upstream;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** How many requests it served as `method` (compared upper-case, as it reads them), on `path`. */
  servedAs(method: string, path: string): number {
    return this.served.filter((r) => r.method.toUpperCase() === method && r.path === path).length;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  #serve(socket: Socket): void {
    let received = Buffer.alloc(0);
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = received.subarray(0, end).toString('latin1').split('\r\n');
      const length = /^content-length:\s*(\d+)$/im.exec(head.join('\n'))?.[1];
      if (received.length < end + 4 + Number(length ?? 0)) return;
      socket.removeAllListeners('data');
      const [method = '', path = ''] = head[0]!.split(' ');
      this.served.push({ method, path });
      const body = `served as ${method.toUpperCase()}`;
      socket.end(
        `HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${body.length}\r\n` +
          `connection: close\r\n\r\n${body}`,
      );
    });
  }
}
