import { pino, type Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'tollgate', pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

/**
 * A warning that may fire on every request (Redis down, an upstream unreachable): logged at most
 * once per interval, with how many were suppressed since, so an outage cannot flood the log.
 */
export function throttledWarn(logger: Logger, msg: string, intervalMs = 1000): (fields: object) => void {
  let last = 0;
  let suppressed = 0;
  return (fields) => {
    const now = Date.now();
    if (now - last < intervalMs) {
      suppressed++;
      return;
    }
    logger.warn({ ...fields, suppressed }, msg);
    last = now;
    suppressed = 0;
  };
}
