import type { Logger } from 'pino';

/** Resolves on the first SIGTERM or SIGINT. */
export function stopSignal(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      logger.info({ signal }, 'shutting down');
      resolve();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}
