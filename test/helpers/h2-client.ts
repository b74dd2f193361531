import { once } from 'node:events';
import { connect, type ClientHttp2Session, type OutgoingHttpHeaders } from 'node:http2';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';

export interface H2Reply {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly text: string;
}

/** An HTTP/2 session to a TLS listener trusting `ca`. */
export async function h2Session(url: string, ca: Buffer): Promise<ClientHttp2Session> {
  const session = connect(url, { ca });
  session.on('error', () => {}); // a test that expects a disconnect asserts on it itself
  await once(session, 'remoteSettings'); // after 'connect': the server's SETTINGS are known
  return session;
}

/** One request on the session; pseudo-headers stripped from the reply's headers. */
export function h2Request(
  session: ClientHttp2Session,
  headers: OutgoingHttpHeaders,
  body?: string,
): Promise<H2Reply> {
  return new Promise((resolve, reject) => {
    const req = session.request(headers, { endStream: body === undefined });
    let status = 0;
    const out: Record<string, string> = {};
    req.on('response', (h) => {
      status = Number(h[':status']);
      for (const [k, v] of Object.entries(h)) if (!k.startsWith(':') && v !== undefined) out[k] = String(v);
    });
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (text += d));
    req.on('end', () => resolve({ status, headers: out, text }));
    req.on('error', reject);
    if (body !== undefined) req.end(body);
  });
}

/** The SHA-256 fingerprint of the certificate a new TLS connection gets. */
export async function peerFingerprint(port: number, options: ConnectionOptions): Promise<string> {
  const socket = tlsConnect({ host: '127.0.0.1', port, ...options });
  try {
    await once(socket, 'secureConnect');
    return socket.getPeerCertificate().fingerprint256;
  } finally {
    socket.destroy();
  }
}
