import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listen } from './listen.js';
import { sendError, sendJson } from '../http/responses.js';

/** Renders the metrics text: one registry, or (under node:cluster) the workers' aggregate. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

/** The admin listener: GET /metrics (Prometheus text) and GET /healthz, off the public port. */
export async function startAdminServer(host: string, port: number, source: MetricsSource): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (req.method !== 'GET') return sendError(res, 405, 'method_not_allowed', 'Use GET.', { allow: 'GET' });
    if (path === '/healthz') return sendJson(res, 200, '{"status":"ok"}');
    if (path !== '/metrics') return sendError(res, 404, 'not_found', 'Only /metrics and /healthz are here.');
    source.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': source.contentType });
        res.end(text);
      },
      (err: Error) => sendError(res, 500, 'metrics_failed', err.message),
    );
  });
  await listen(server, { host, port, what: 'admin listener' });
  return server;
}

export function adminUrl(server: Server): string {
  const { address, port } = server.address() as AddressInfo;
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
}
