import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listen } from './listen.js';
import { sendError, sendJson } from '../http/responses.js';
import { authorizeAdmin, findAdminRoute, type AdminRoute } from './admin-api.js';

/** Renders the metrics text: one registry, or (under node:cluster) the workers' aggregate. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

export interface AdminOptions {
  /** The API's routes (overrides, bans, …), besides /metrics and /healthz. */
  readonly routes?: readonly AdminRoute[];
  /** The bearer token that any method but GET needs (config admin.token); absent: read-only. */
  readonly token?: string | undefined;
}

/** The admin listener: GET /metrics (Prometheus text), GET /healthz and the admin API, off the public port. */
export async function startAdminServer(
  host: string,
  port: number,
  source: MetricsSource,
  options: AdminOptions = {},
): Promise<Server> {
  const routes = options.routes ?? [];
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    const method = req.method ?? 'GET';
    if (method === 'GET' && path === '/healthz') return sendJson(res, 200, '{"status":"ok"}');
    if (method === 'GET' && path === '/metrics') {
      source.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': source.contentType });
          res.end(text);
        },
        (err: Error) => sendError(res, 500, 'metrics_failed', err.message),
      );
      return;
    }
    const found = findAdminRoute(routes, method, path);
    if (found === undefined) {
      if (path === '/healthz' || path === '/metrics') {
        return sendError(res, 405, 'method_not_allowed', 'Use GET.', { allow: 'GET' });
      }
      return sendError(res, 404, 'not_found', 'No such admin path: see docs/admin.md.');
    }
    if (found === 'wrong-method') {
      const allow = routes.filter(
        (r) => r.path === path || (r.path.endsWith('/') && path.startsWith(r.path)),
      );
      return sendError(res, 405, 'method_not_allowed', 'This method is not served here.', {
        allow: [...new Set(allow.map((r) => r.method))].join(', '),
      });
    }
    if (method !== 'GET' && !authorizeAdmin(req, res, options.token)) return;
    Promise.resolve(found.route.handle(req, res, found.rest)).catch((err: Error) => {
      if (!res.headersSent) sendError(res, 500, 'admin_failed', err.message);
      else res.destroy();
    });
  });
  await listen(server, { host, port, what: 'admin listener' });
  return server;
}

export function adminUrl(server: Server): string {
  const { address, port } = server.address() as AddressInfo;
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
}
