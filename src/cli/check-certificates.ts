import { ConfigError, type ConfigIssue } from '../config/errors.js';
import type { GatewayConfig } from '../config/schema.js';
import { CertificateError, loadCertificates } from '../runtime/tls/certificates.js';

/**
 * Loads the certificate files of every TLS listener as the listener will (each PEM parses, the key
 * matches the certificate, the CA parses). Throws a ConfigError naming the config field and the file
 * at fault: `tollgate check` reports it, and `tollgate start` refuses to start on it, before any
 * worker is forked (a worker failing on it would be restarted forever).
 */
export async function checkCertificates(file: string, config: GatewayConfig): Promise<void> {
  const issues: ConfigIssue[] = [];
  for (const [i, listener] of config.listeners.entries()) {
    const tls = listener.tls;
    if (!tls) continue;
    try {
      await loadCertificates(tls);
    } catch (err) {
      if (!(err instanceof CertificateError)) throw err;
      // The field of the file at fault; a key that does not match its certificate is the pair's.
      const field =
        err.file === tls.cert
          ? 'cert'
          : err.file === tls.key
            ? 'key'
            : err.file === tls.ca
              ? 'ca'
              : undefined;
      issues.push({ path: ['listeners', i, 'tls', ...(field ? [field] : [])], message: err.message });
    }
  }
  if (issues.length > 0) throw new ConfigError(file, issues);
}
