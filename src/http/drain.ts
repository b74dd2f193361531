import type { Server } from 'node:http';
import type { Logger } from 'pino';

/**
 * Stops accepting on `servers` and lets in-flight requests finish for up to `drainMs`; then closes
 * the connections that remain. Resolves once every server is closed.
 */
export async function drainServers(
  servers: readonly Server[],
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
