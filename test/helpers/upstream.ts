import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A bare HTTP server with a handler of the test's own, for upstream behaviour TestUpstream lacks. */
export interface PlainServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function startPlainServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<PlainServer> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/**
 * A real HTTP upstream for tests. It echoes requests as JSON, and has paths for the awkward cases:
 * /status/NNN, /cost?n=N (an X-Cost header), /slow?ms=N, /hang (never answers; records the abort), /stream (chunks over time).
 */
export class TestUpstream {
  readonly seen: SeenRequest[] = [];
  /** Requests to /hang that arrived, and those whose connection the gateway closed. */
  hung = 0;
  aborted = 0;
  /** TCP connections accepted in all, those still open, and requests whose response has not closed yet. */
  connectionsAccepted = 0;
  openConnections = 0;
  openRequests = 0;
  #server: Server;

  private constructor(server: Server) {
    this.#server = server;
    server.on('connection', (socket) => {
      this.connectionsAccepted++;
      this.openConnections++;
      socket.once('close', () => this.openConnections--);
    });
    server.on('request', (_req, res: ServerResponse) => {
      this.openRequests++;
      res.once('close', () => this.openRequests--);
    });
  }

  static async start(): Promise<TestUpstream> {
    const upstream: TestUpstream = new TestUpstream(
      createServer((req, res) => {
        // A request the gateway aborts mid-body ends the body read with "aborted": nothing to
        // answer then. Any other failure stays an unhandled rejection, so a test sees it.
        upstream.#handle(req, res).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'ECONNRESET' || !req.destroyed) throw err;
        });
      }),
    );
    upstream.#server.listen(0, '127.0.0.1');
    await once(upstream.#server, 'listening');
    return upstream;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise((r) => this.#server.close(r));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://upstream');
    if (url.pathname === '/hang') {
      this.hung++;
      req.resume();
      res.on('close', () => {
        if (!res.writableFinished) this.aborted++;
      });
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const seen = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: Buffer.concat(chunks).toString(),
    };
    this.seen.push(seen);
    if (url.pathname.startsWith('/status/')) {
      res.writeHead(Number(url.pathname.slice(8)), {
        'content-type': 'application/json',
        'x-ratelimit-limit': '999',
      });
      res.end('{"upstream":true}');
      return;
    }
    if (url.pathname === '/cost') {
      // The cost an upstream reports for the request (chargeAfter): ?n= as sent, ?status= (200).
      res.writeHead(Number(url.searchParams.get('status') ?? 200), {
        'content-type': 'application/json',
        'x-cost': url.searchParams.get('n') ?? '',
      });
      res.end('{"upstream":true}');
      return;
    }
    if (url.pathname === '/slow')
      await new Promise((r) => setTimeout(r, Number(url.searchParams.get('ms') ?? 1000)));
    if (url.pathname === '/big') {
      // A large response, written with back-pressure: a client that never reads holds it half-sent.
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const chunks = Number(url.searchParams.get('chunks') ?? 256);
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      for (let i = 0; i < chunks && !res.destroyed; i++) {
        if (!res.write(chunk)) await once(res, 'drain').catch(() => {});
      }
      res.end();
      return;
    }
    if (url.pathname === '/stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 3; i++) {
        res.write(`data: ${i}\n\n`);
        await new Promise((r) => setTimeout(r, 600));
      }
      res.end();
      return;
    }
    const body = JSON.stringify(seen);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }
}
