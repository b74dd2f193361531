import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface CertificateFiles {
  readonly cert: string;
  readonly key: string;
  /** The certificate's PEM, for a client's `ca` (self-signed) or to compare. */
  readonly pem: Buffer;
  /** As tls.getPeerCertificate().fingerprint256 shows it. */
  readonly fingerprint: string;
}

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
const KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

function files(cert: string, key: string): CertificateFiles {
  const pem = readFileSync(cert);
  return { cert, key, pem, fingerprint: new X509Certificate(pem).fingerprint256 };
}

/** A self-signed certificate for 127.0.0.1 and localhost (also usable as a CA), written to dir/name.{pem,key}. */
export function selfSigned(dir: string, name: string): CertificateFiles {
  const cert = join(dir, `${name}.pem`);
  const key = join(dir, `${name}.key`);
  openssl([
    'req',
    '-x509',
    ...KEY,
    '-keyout',
    key,
    '-out',
    cert,
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-addext',
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
  ]);
  return files(cert, key);
}

/** A client certificate signed by `ca`. */
export function signedBy(dir: string, name: string, ca: CertificateFiles): CertificateFiles {
  const cert = join(dir, `${name}.pem`);
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  openssl(['req', ...KEY, '-keyout', key, '-out', csr, '-subj', `/CN=${name}`]);
  openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca.cert,
    '-CAkey',
    ca.key,
    '-CAcreateserial',
    '-out',
    cert,
    '-days',
    '2',
  ]);
  return files(cert, key);
}

/**
 * A plain and a TLS listener (a fresh self-signed certificate) as the `listeners:` block of a
 * gateway config, with the CA a client trusts: `gateway.url('plain')`, `gateway.url('tls')`.
 */
export function plainAndTlsListeners(prefix: string): { ca: Buffer; yaml: string } {
  const server = selfSigned(mkdtempSync(join(tmpdir(), prefix)), 'server');
  const listeners = [
    { name: 'plain', host: '127.0.0.1', port: 0 },
    { name: 'tls', host: '127.0.0.1', port: 0, tls: { cert: server.cert, key: server.key } },
  ];
  return {
    ca: readFileSync(server.cert),
    yaml: `listeners:\n${listeners.map((l) => `  - ${JSON.stringify(l)}`).join('\n')}`,
  };
}
