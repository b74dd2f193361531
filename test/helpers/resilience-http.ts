import { once } from 'node:events';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { Reply } from './gateway.js';

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

/**
 * One request through node:http on a fresh connection, which (unlike undici) sends any header as
 * given, hop-by-hop ones included, and can pick its source address (any of 127.0.0.0/8).
 */
export async function rawRequest(
  url: string,
  options: { method?: string; headers?: OutgoingHttpHeaders; body?: string; localAddress?: string } = {},
): Promise<Reply> {
  const req = httpRequest(url, {
    method: options.method ?? 'GET',
    headers: options.headers,
    localAddress: options.localAddress,
    agent: false,
  });
  req.end(options.body);
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString();
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers))
    if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
  return { status: res.statusCode ?? 0, headers, text, json: () => JSON.parse(text) as unknown };
}

/** Opens (and at once closes) a fresh TCP connection; rejects with the socket error, e.g. ECONNREFUSED. */
export async function connectOnce(port: number, host = '127.0.0.1'): Promise<void> {
  const socket = connect(port, host);
  try {
    await once(socket, 'connect');
  } finally {
    socket.destroy();
  }
}
