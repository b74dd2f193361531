import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis, type RedisOptions } from 'ioredis';
import { freePort } from './ports.js';
import { waitFor } from './wait.js';

const run = promisify(execFile);
const HOST = '127.0.0.1';

/** The name in the server's certificate: not 127.0.0.1, so a client must send it (SNI) to verify. */
export const SERVER_NAME = 'redis.test';
/** The ACL user every TLS test server has (the default user is off). */
export const USER = 'tollgate';
export const PASSWORD = 'Sup3r-s3cret-pw';

/** A CA, a server certificate for SERVER_NAME and a client certificate, made with openssl in a fresh folder. */
export class TestCertificates {
  private constructor(readonly dir: string) {}

  static async create(): Promise<TestCertificates> {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-tls-'));
    const ssl = (...args: string[]) => run('openssl', args, { cwd: dir });
    const key = (name: string) => ssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', name);
    await key('ca.key');
    await ssl(
      'req',
      '-x509',
      '-new',
      '-key',
      'ca.key',
      '-days',
      '1',
      '-subj',
      '/CN=tollgate test CA',
      '-out',
      'ca.crt',
    );
    const signed = async (name: string, subject: string, extensions: string) => {
      await key(`${name}.key`);
      await ssl('req', '-new', '-key', `${name}.key`, '-subj', subject, '-out', `${name}.csr`);
      writeFileSync(join(dir, `${name}.ext`), extensions);
      await ssl(
        'x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial',
        '-days', '1', '-extfile', `${name}.ext`, '-out', `${name}.crt`,
      ); // prettier-ignore
    };
    await signed(
      'server',
      `/CN=${SERVER_NAME}`,
      `subjectAltName=DNS:${SERVER_NAME}\nextendedKeyUsage=serverAuth,clientAuth\n`,
    );
    await signed('client', '/CN=tollgate', 'extendedKeyUsage=clientAuth\n');
    return new TestCertificates(dir);
  }

  file(name: 'ca.crt' | 'server.crt' | 'server.key' | 'client.crt' | 'client.key'): string {
    return join(this.dir, name);
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface TlsServerOptions {
  /** tls-auth-clients: whether a client certificate is required. */
  readonly clientCerts?: 'yes' | 'no';
  /** Cluster mode, the bus over TLS too (tls-cluster yes). */
  readonly cluster?: boolean;
}

/** A redis-server that speaks TLS only (no plain port), with the ACL user USER. */
export class TlsRedisServer {
  private constructor(
    readonly port: number,
    readonly child: ChildProcess,
  ) {}

  static async start(
    certs: TestCertificates,
    options: TlsServerOptions = {},
    dir?: string,
  ): Promise<TlsRedisServer> {
    const port = await freePort();
    const cluster = options.cluster
      ? [
          '--cluster-enabled', 'yes', '--tls-cluster', 'yes', '--tls-replication', 'yes',
          '--cluster-port', String(await freePort()), '--cluster-config-file', join(dir!, `nodes-${port}.conf`),
          '--cluster-node-timeout', '1000', '--dir', dir!,
        ]
      : []; // prettier-ignore
    const child = spawn(
      'redis-server',
      [
        '--port', '0', '--tls-port', String(port), '--bind', HOST,
        '--tls-cert-file', certs.file('server.crt'), '--tls-key-file', certs.file('server.key'),
        '--tls-ca-cert-file', certs.file('ca.crt'), '--tls-auth-clients', options.clientCerts ?? 'no',
        '--save', '', '--appendonly', 'no', '--protected-mode', 'no',
        // The ACL user the store logs in as; the default user is off, so nothing works without it.
        '--user', USER, 'on', `>${PASSWORD}`, '~*', '&*', '+@all', '--user', 'default', 'off',
        ...cluster,
      ],
      { stdio: 'ignore' },
    ); // prettier-ignore
    const server = new TlsRedisServer(port, child);
    try {
      await waitFor(
        async () => {
          if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
          const client = server.client(certs, { lazyConnect: true, retryStrategy: () => null });
          client.on('error', () => {});
          try {
            await client.connect();
            return await client.ping();
          } catch {
            return undefined;
          } finally {
            client.disconnect();
          }
        },
        (reply) => reply === 'PONG',
        { timeoutMs: 10_000, what: `TLS redis-server on ${port}` },
      );
    } catch (err) {
      await server.kill();
      throw err;
    }
    return server;
  }

  /** rediss://USER:PASSWORD@127.0.0.1:port (or another password). */
  url(password = PASSWORD): string {
    return `rediss://${USER}:${encodeURIComponent(password)}@${HOST}:${this.port}`;
  }

  /** A client of this server, for inspecting keys or as a probe. */
  client(certs: TestCertificates, extra: RedisOptions = {}): Redis {
    return new Redis({
      host: HOST,
      port: this.port,
      username: USER,
      password: PASSWORD,
      maxRetriesPerRequest: 1,
      tls: {
        ca: readFileSync(certs.file('ca.crt')),
        servername: SERVER_NAME,
        cert: readFileSync(certs.file('client.crt')),
        key: readFileSync(certs.file('client.key')),
      },
      ...extra,
    });
  }

  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGKILL');
    await once(this.child, 'exit');
  }
}

/** Three TLS masters joined in a cluster (no replicas), over a TLS cluster bus. */
export class TlsRedisCluster {
  private constructor(
    readonly nodes: TlsRedisServer[],
    private readonly dir: string,
  ) {}

  static async start(certs: TestCertificates): Promise<TlsRedisCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-tls-cluster-'));
    const nodes: TlsRedisServer[] = [];
    const cluster = new TlsRedisCluster(nodes, dir);
    try {
      for (let i = 0; i < 3; i++) nodes.push(await TlsRedisServer.start(certs, { cluster: true }, dir));
      await run(
        'redis-cli',
        [
          '--tls', '--cacert', certs.file('ca.crt'), '--sni', SERVER_NAME, '--user', USER, '--pass', PASSWORD,
          '--no-auth-warning', '--cluster', 'create', ...nodes.map((n) => `${HOST}:${n.port}`),
          '--cluster-replicas', '0', '--cluster-yes',
        ],
        { timeout: 20_000 },
      ); // prettier-ignore
      await waitFor(
        async () => {
          const infos = await Promise.all(
            nodes.map(async (n) => {
              const c = n.client(certs, { lazyConnect: true, retryStrategy: () => null });
              c.on('error', () => {});
              try {
                await c.connect();
                return String(await c.call('CLUSTER', 'INFO'));
              } catch {
                return '';
              } finally {
                c.disconnect();
              }
            }),
          );
          return infos.every((i) => /cluster_state:ok/.test(i) && /cluster_known_nodes:3/.test(i));
        },
        (ok) => ok,
        { timeoutMs: 20_000, intervalMs: 100, what: 'TLS cluster_state:ok on every node' },
      );
      return cluster;
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  }

  /** rediss:// seeds with the ACL user, as store.redis.cluster takes them. */
  seeds(password = PASSWORD): string[] {
    return this.nodes.map((n) => n.url(password));
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
