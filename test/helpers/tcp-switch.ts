import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP front on a fixed port that forwards each connection to one backend port, and can be
 * pointed at another (a failover behind a stable address, as a virtual IP or a DNS name gives):
 * `switchTo` closes every forwarded connection, so clients reconnect, and reach the new backend.
 */
export class TcpSwitch {
  readonly #sockets = new Set<Socket>();
  #target: number;

  private constructor(
    readonly server: Server,
    target: number,
  ) {
    this.#target = target;
  }

  static async start(target: number): Promise<TcpSwitch> {
    const server = createServer();
    const front = new TcpSwitch(server, target);
    server.on('connection', (client) => front.#forward(client));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return front;
  }

  get url(): string {
    return `redis://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Forwards new connections to `target`, and closes the current ones. */
  switchTo(target: number): void {
    this.#target = target;
    for (const s of this.#sockets) s.destroy();
  }

  async close(): Promise<void> {
    this.switchTo(0);
    this.server.close();
    await once(this.server, 'close');
  }

  #forward(client: Socket): void {
    const backend = connect(this.#target, '127.0.0.1');
    for (const [a, b] of [
      [client, backend],
      [backend, client],
    ] as const) {
      this.#sockets.add(a);
      a.pipe(b);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        this.#sockets.delete(a);
        b.destroy();
      });
    }
  }
}
