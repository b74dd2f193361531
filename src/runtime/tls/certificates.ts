import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import type { ListenerTlsConfig } from '../../config/schema.js';

/** A certificate set that failed to load: the file at fault, and why. */
export class CertificateError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`${file}: ${reason}`);
  }
}

/** The PEM material of a TLS listener, checked to make a working secure context. */
export interface Certificates {
  readonly options: SecureContextOptions;
  /** SHA-256 fingerprint of the leaf certificate (as tls.getPeerCertificate().fingerprint256 shows it). */
  readonly fingerprint: string;
}

type Read = (file: string) => Promise<Buffer>;

async function readPem(file: string, read: Read): Promise<Buffer> {
  try {
    return await read(file);
  } catch (err) {
    throw new CertificateError(file, (err as Error).message);
  }
}

/**
 * Reads and checks the files of `cfg`. Each file is parsed on its own first, so an error names the
 * file at fault; then the key must match the certificate. Throws CertificateError.
 */
async function load(cfg: ListenerTlsConfig, read: Read): Promise<Certificates> {
  const [cert, key, ca] = await Promise.all([
    readPem(cfg.cert, read),
    readPem(cfg.key, read),
    cfg.ca ? readPem(cfg.ca, read) : undefined,
  ]);
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch (err) {
    throw new CertificateError(cfg.cert, `not a PEM certificate (${(err as Error).message})`);
  }
  try {
    createPrivateKey(key);
  } catch (err) {
    throw new CertificateError(cfg.key, `not a PEM private key (${(err as Error).message})`);
  }
  if (ca) {
    try {
      new X509Certificate(ca);
    } catch (err) {
      throw new CertificateError(cfg.ca, `not a PEM CA certificate (${(err as Error).message})`);
    }
  }
  const options: SecureContextOptions = { cert, key, ca, minVersion: cfg.minVersion };
  try {
    createSecureContext(options);
  } catch (err) {
    throw new CertificateError(`${cfg.cert} + ${cfg.key}`, (err as Error).message);
  }
  return { options, fingerprint: leaf.fingerprint256 };
}

/** Loads the certificate set of a TLS listener (at start, and again on each reload). */
export function loadCertificates(cfg: ListenerTlsConfig): Promise<Certificates> {
  return load(cfg, (file) => readFile(file));
}

/** The files a reload watches. */
export function certificateFiles(cfg: ListenerTlsConfig): string[] {
  return [cfg.cert, cfg.key, ...(cfg.ca ? [cfg.ca] : [])];
}
