import { once } from 'node:events';
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import type { Reply } from './gateway.js';

/**
 * One request through node:http on a fresh connection, which (unlike undici) sends any header as
 * given, hop-by-hop ones included, and can pick its source address (any of 127.0.0.0/8).
 */
export async function sendAsIs(
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
