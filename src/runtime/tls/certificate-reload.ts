import type { Logger } from 'pino';
import type { GatewayMetrics } from '../../metrics/gateway-metrics.js';
import { CertificateError } from './certificates.js';
import type { SecureListener } from './secure-listener.js';

/**
 * Reads every TLS listener's certificate files again. A changed set goes to new connections
 * (open ones keep theirs) and counts as a successful reload; a bad or unreadable one is logged
 * with its file, counted as a failed reload, and the running certificate stays. True when none failed.
 */
export async function reloadCertificates(
  secure: ReadonlyMap<string, SecureListener>,
  metrics: GatewayMetrics,
  logger: Logger,
): Promise<boolean> {
  const results = await Promise.all(
    [...secure].map(async ([listener, l]) => {
      try {
        if ((await l.reloadCertificates()) === 'unchanged') return true;
        metrics.configReload(true);
        logger.info({ listener, fingerprint: l.fingerprint }, 'certificates reloaded');
        return true;
      } catch (err) {
        metrics.configReload(false);
        const file = err instanceof CertificateError ? err.file : undefined;
        logger.error(
          { listener, file, err: (err as Error).message },
          'certificate reload failed: keeping the running certificate',
        );
        return false;
      }
    }),
  );
  return results.every(Boolean);
}
