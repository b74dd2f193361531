import { once } from 'node:events';
import { connect } from 'node:net';
import type { Reply } from './gateway.js';

/**
 * One request written byte for byte on a fresh socket (no client library normalises the target or
 * the headers), read until the server closes. For targets and headers an attacker would send.
 */
export async function rawRequest(
  baseUrl: string,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body = '',
): Promise<Reply> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  const lines = [`${method} ${target} HTTP/1.1`];
  const all: Record<string, string> = {
    host: 'localhost',
    'content-length': String(Buffer.byteLength(body)),
    ...headers,
  };
  // Always "close" as well, so the reply ends with the connection.
  all['connection'] = all['connection'] ? `${all['connection']}, close` : 'close';
  for (const [name, value] of Object.entries(all)) lines.push(`${name}: ${value}`);
  socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  await once(socket, 'close');
  return parseReply(Buffer.concat(chunks).toString('latin1'));
}

function parseReply(raw: string): Reply {
  const end = raw.indexOf('\r\n\r\n');
  const [statusLine, ...headerLines] = raw.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let text = raw.slice(end + 4);
  if (headers['transfer-encoding'] === 'chunked') text = unchunk(text);
  return {
    status: Number(statusLine?.split(' ')[1]),
    headers,
    text,
    json: () => JSON.parse(text) as unknown,
  };
}

function unchunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const lineEnd = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, lineEnd), 16);
    if (!size) return out;
    out += rest.slice(lineEnd + 2, lineEnd + 2 + size);
    rest = rest.slice(lineEnd + 4 + size);
  }
}
