import type { Logger } from 'pino';

/** What a drain needs of a listener's server: node:http's Server, or a TLS listener (SecureListener). */
export interface DrainableServer {
  close(callback: () => void): void;
  closeIdleConnections(): void;
  closeAllConnections(): void;
}

/**
 * Stops accepting on `servers` and lets in-flight requests finish for up to `drainMs`; then closes
 * the connections that remain. Resolves once every server is closed.
 */
export async function drainServers(
  servers: readonly DrainableServer[],
  drainMs: number,
  logger: Logger,
): Promise<void> {
  const closed = Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  // Keep-alive connections become idle as their last response ends: close them as they do.
  const reaper = setInterval(() => servers.forEach((s) => s.closeIdleConnections()), 50);
  servers.forEach((s) => s.closeIdleConnections());
  let timer: NodeJS.Timeout | undefined;
  const drained = await Promise.race([
    closed.then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), drainMs))),
  ]);
  clearTimeout(timer);
  clearInterval(reaper);
  if (!drained) {
    logger.warn({ drainMs }, 'drain timeout: closing remaining connections');
    for (const s of servers) s.closeAllConnections();
  }
}
