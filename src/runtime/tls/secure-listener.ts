import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import {
  constants,
  createSecureServer,
  type Http2SecureServer,
  type Http2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import type { ListenerConfig, ListenerTlsConfig } from '../../config/schema.js';
import { throttledWarn } from '../../logger.js';
import { loadCertificates, type Certificates } from './certificates.js';
import { resetByGateway } from './h2-adapters.js';
import type { StreamRequest } from './h2-request.js';
import type { StreamResponse } from './h2-response.js';
import { serveStreams } from './h2-stream.js';
import { ResetBudget } from './reset-budget.js';

/** How long a client cut off for rapid reset has to read the GOAWAY before its socket is destroyed. */
const GOAWAY_GRACE_MS = 1000;
/** How long node gets to end a destroyed session's socket itself before it is destroyed under it. */
const SOCKET_GRACE_MS = 1000;

/** The request path's handler, given HTTP/1.1's request and response or HTTP/2's adapters (h2-stream.ts). */
type AnyRequestListener = (
  req: IncomingMessage | StreamRequest,
  res: ServerResponse | StreamResponse,
) => void;

/**
 * A TLS listener: HTTP/2 and HTTP/1.1 by ALPN (or HTTP/1.1 alone with http2.enabled false), its
 * certificate swappable while it runs, its connections tracked so a shutdown can drain them
 * (node:http2's server has no closeIdleConnections).
 */
export class SecureListener {
  readonly server: Http2SecureServer | HttpsServer;
  #certificates: Certificates;
  readonly #sessions = new Set<Http2Session>();
  /** HTTP/1.1-over-TLS connections, with the requests each has in progress. */
  readonly #http1 = new Map<Socket, number>();
  /** Every TLS connection: a destroyed h2 session can leave its socket open, so the drain's last step closes these. */
  readonly #sockets = new Set<TLSSocket>();
  /** Each h2 session's TLS socket: its own `socket` is a proxy that may not be destroyed. */
  readonly #sessionSockets = new WeakMap<Http2Session, TLSSocket>();
  /** The session Node has just created for the connection whose 'secureConnection' runs next. */
  #newSession: Http2Session | undefined;
  readonly #warnRapidReset: (fields: object) => void;

  private constructor(
    private readonly cfg: ListenerConfig & { readonly tls: ListenerTlsConfig },
    handle: RequestListener,
    certificates: Certificates,
    logger: Logger,
  ) {
    this.#certificates = certificates;
    this.#warnRapidReset = throttledWarn(logger, 'HTTP/2 client reset streams too fast: disconnected');
    const tlsOptions = {
      ...certificates.options,
      requestCert: cfg.tls.ca !== '',
      rejectUnauthorized: cfg.tls.ca !== '',
    };
    const listener = handle as unknown as AnyRequestListener;
    if (cfg.http2.enabled) {
      const server = createSecureServer({
        ...tlsOptions,
        allowHTTP1: true,
        settings: { maxConcurrentStreams: cfg.http2.maxConcurrentStreams },
      });
      // HTTP/2 streams by the core API (h2-stream.ts), HTTP/1.1 by node's 'request'.
      serveStreams(server, listener, listener, (session) => this.#sessionSockets.get(session));
      server.on('session', (session) => this.#onSession(session));
      this.server = server;
    } else {
      this.server = createHttpsServer(tlsOptions, handle);
    }
    this.server.on('checkContinue', listener);
    this.server.on('secureConnection', (socket: TLSSocket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
      // Node's own 'secureConnection' listener, added first, has just emitted this socket's 'session'.
      if (this.#newSession) this.#sessionSockets.set(this.#newSession, socket);
      this.#newSession = undefined;
      if (socket.alpnProtocol === 'h2') return;
      this.#http1.set(socket, 0);
      socket.once('close', () => this.#http1.delete(socket));
    });
    // Only HTTP/1.1 requests are counted per socket: h2 sessions drain by GOAWAY.
    this.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (req.httpVersionMajor !== 1) return;
      const socket = req.socket;
      this.#http1.set(socket, (this.#http1.get(socket) ?? 0) + 1);
      res.once('close', () => {
        const n = this.#http1.get(socket);
        if (n !== undefined) this.#http1.set(socket, n - 1);
      });
    });
  }

  static async create(
    cfg: ListenerConfig & { readonly tls: ListenerTlsConfig },
    handle: RequestListener,
    logger: Logger,
  ): Promise<SecureListener> {
    return new SecureListener(cfg, handle, await loadCertificates(cfg.tls), logger);
  }

  /** The leaf certificate's SHA-256 fingerprint new connections get. */
  get fingerprint(): string {
    return this.#certificates.fingerprint;
  }

  /**
   * Reads the certificate files again and gives the new set to new connections (open ones keep
   * theirs). Returns 'changed', 'unchanged', or throws CertificateError (the old set stays).
   */
  async reloadCertificates(): Promise<'changed' | 'unchanged'> {
    const next = await loadCertificates(this.cfg.tls);
    if (next.fingerprint === this.#certificates.fingerprint && sameOptions(next, this.#certificates)) {
      return 'unchanged';
    }
    this.server.setSecureContext(next.options);
    this.#certificates = next;
    return 'changed';
  }

  /** Counts the streams the client resets; past the budget the connection is closed (GOAWAY). */
  #onSession(session: Http2Session): void {
    this.#sessions.add(session);
    this.#newSession = session;
    session.once('close', () => this.#sessions.delete(session));
    const { maxResetBurst, maxResetsPerSecond } = this.cfg.http2;
    const budget = new ResetBudget(maxResetBurst, maxResetsPerSecond, Date.now());
    let cutOff = false;
    const onStreamClose = (stream: ServerHttp2Stream) => {
      if (stream.rstCode === constants.NGHTTP2_NO_ERROR || stream.rstCode === undefined) return;
      if (resetByGateway.has(stream) || session.destroyed || cutOff) return;
      if (budget.spend(Date.now())) return;
      cutOff = true;
      this.#warnRapidReset({ listener: this.cfg.name, peer: session.socket?.remoteAddress });
      // GOAWAY with ENHANCE_YOUR_CALM, then the socket closes: its streams in flight are cancelled.
      // Node ends the socket gracefully after the GOAWAY (so the frame reaches the client first),
      // and a client that keeps writing would hold it half-open: the socket is destroyed once the
      // client has had GOAWAY_GRACE_MS to read it.
      const socket = this.#sessionSockets.get(session);
      // GOAWAY first, on its own: nghttp2 then ignores the client's new streams, and the frame
      // goes out ahead of the RST_STREAMs of the streams in flight.
      session.goaway(constants.NGHTTP2_ENHANCE_YOUR_CALM);
      setTimeout(() => {
        // (An error must be given: with none, node's default turns the code into NO_ERROR.)
        destroySession(session, socket, new Error('rapid reset'), constants.NGHTTP2_ENHANCE_YOUR_CALM);
      }, GOAWAY_GRACE_MS).unref();
    };
    // One listener per session, not a closure and a once-wrapper per stream ('close' comes once).
    function onClose(this: ServerHttp2Stream): void {
      onStreamClose(this);
    }
    session.on('stream', (stream: ServerHttp2Stream) => stream.on('close', onClose));
  }

  /** The drain's half-step: HTTP/2 sessions get GOAWAY (and close once their streams end); idle HTTP/1.1 connections close. */
  closeIdleConnections(): void {
    for (const session of this.#sessions) if (!session.closed) session.close();
    for (const [socket, active] of this.#http1) if (active === 0) socket.destroy();
  }

  closeAllConnections(): void {
    const sessionSockets = new Set<TLSSocket>();
    for (const session of this.#sessions) {
      const socket = this.#sessionSockets.get(session);
      if (socket) sessionSockets.add(socket);
      destroySession(session, socket);
    }
    for (const socket of this.#sockets) if (!sessionSockets.has(socket)) socket.destroy();
  }

  close(callback: () => void): void {
    this.server.close(() => callback());
  }
}

/**
 * Destroys an h2 session, and its TLS socket only once node has let go of it. Node ends the socket
 * itself when the session's native handle is done (a frame write in flight completes first);
 * destroying the socket at once, under that write, can abort the whole process (an assertion in
 * node's http2/TLS glue, seen as a crashed worker on a loaded machine). A client that reads nothing
 * would hold that end forever, so the socket is destroyed after SOCKET_GRACE_MS at the latest.
 */
function destroySession(session: Http2Session, socket?: TLSSocket, error?: Error, code?: number): void {
  session.destroy(error, code);
  if (!socket || socket.destroyed) return;
  const timer = setTimeout(() => socket.destroy(), SOCKET_GRACE_MS).unref();
  socket.once('close', () => clearTimeout(timer));
}

function sameOptions(a: Certificates, b: Certificates): boolean {
  const eq = (x: unknown, y: unknown) => (x instanceof Buffer && y instanceof Buffer ? x.equals(y) : x === y);
  return eq(a.options.key, b.options.key) && eq(a.options.ca, b.options.ca);
}
