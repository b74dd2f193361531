// The Redis stores over TLS with an ACL user: real redis-servers speaking TLS only (certificates
// made by openssl for the test), a single node and a 3-master cluster, through the real gateway.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { StoreConfigError } from '../../src/store/redis-connection.js';
import { runCli } from '../helpers/cli.js';
import { test as base } from '../helpers/fixtures.js';
import { gatewayYaml, limitHeaders, send, startGateway } from '../helpers/gateway.js';
import {
  PASSWORD,
  SERVER_NAME,
  TestCertificates,
  TlsRedisCluster,
  TlsRedisServer,
  USER,
} from '../helpers/redis-tls.js';

const test = base
  .extend('certs', { scope: 'file' }, async ({}, { onCleanup }) => {
    const certs = await TestCertificates.create();
    onCleanup(() => certs.remove());
    return certs;
  })
  .extend('tlsRedis', { scope: 'file' }, async ({ certs }, { onCleanup }) => {
    const server = await TlsRedisServer.start(certs);
    onCleanup(() => server.kill());
    return server;
  });

interface StoreYaml {
  readonly url?: string;
  readonly cluster?: readonly string[];
  readonly tls: Record<string, string>;
}

/** A gateway config counting in the given TLS store, one route limited to 3 per minute per IP. */
const config = (store: StoreYaml, limit = 3) =>
  gatewayYaml(`
store:
  redis:
    ${store.url ? `url: '${store.url}'` : `cluster: ${JSON.stringify(store.cluster)}`}
    tls: ${JSON.stringify(store.tls)}
    commandTimeout: 2s
    connectTimeout: 5s
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
routes:
  - name: all
    paths: ['/*']
    upstream: app
    limiters:
      - name: per-ip
        windows: [{ limit: ${limit}, period: 1m, key: [ip] }]
`);

/** Three requests pass with the exact headers, the fourth is refused: the counts live in the TLS store. */
async function expectCounted(url: string) {
  const remaining: string[] = [];
  for (let i = 0; i < 3; i++) {
    const reply = await send(`${url}/x`);
    expect(reply.status).toBe(200);
    remaining.push(reply.headers['x-ratelimit-remaining']!);
  }
  expect(remaining).toEqual(['2', '1', '0']);
  const refused = await send(`${url}/x`);
  expect(refused.status).toBe(429);
  expect(limitHeaders(refused)).toEqual({
    'x-ratelimit-limit': '3',
    'x-ratelimit-remaining': '0',
    'x-ratelimit-reset': expect.stringMatching(/^\d{10}$/),
    'retry-after': expect.stringMatching(/^\d+$/),
  });
}

/** The error a gateway start fails with. */
async function startError(yaml: string, env: Record<string, string>): Promise<Error> {
  try {
    const gateway = await startGateway(yaml, env);
    await gateway.close();
  } catch (err) {
    return err as Error;
  }
  throw new Error('the gateway started');
}

describe('single node over TLS', () => {
  test('rediss:// with an ACL user, the CA file and the server name: requests are counted there', async ({
    certs,
    tlsRedis,
    upstream,
    gateways,
  }) => {
    const gateway = await gateways.start(
      config({ url: tlsRedis.url(), tls: { caFile: certs.file('ca.crt'), serverName: SERVER_NAME } }),
      { UPSTREAM_URL: upstream.url },
    );
    expect((await send(`${gateway.url()}/readyz`)).status).toBe(200);
    await expectCounted(gateway.url());
    const inspect = tlsRedis.client(certs);
    try {
      const keys = await inspect.keys('tg:*:per-ip:60000:ip');
      expect(keys).toHaveLength(1);
      expect(await inspect.get(keys[0]!)).toBe('3');
      // The store logs in as the ACL user: its connections are listed under that name.
      const clients = String(await inspect.call('CLIENT', 'LIST'));
      expect(clients.split('\n').filter((l) => l.includes(`user=${USER}`)).length).toBeGreaterThanOrEqual(2);
      expect(clients).not.toContain('user=default');
    } finally {
      inspect.disconnect();
    }
  });

  test('a client certificate, for a Redis that requires one', async ({ certs, upstream, gateways }) => {
    const strict = await TlsRedisServer.start(certs, { clientCerts: 'yes' });
    try {
      const tls = {
        caFile: certs.file('ca.crt'),
        serverName: SERVER_NAME,
        certFile: certs.file('client.crt'),
        keyFile: certs.file('client.key'),
      };
      const gateway = await gateways.start(config({ url: strict.url(), tls }), {
        UPSTREAM_URL: upstream.url,
      });
      await expectCounted(gateway.url());
    } finally {
      await strict.kill();
    }
  });

  test('without the server name the certificate does not match 127.0.0.1: the start fails, naming the store', async ({
    certs,
    tlsRedis,
    upstream,
  }) => {
    const err = await startError(config({ url: tlsRedis.url(), tls: { caFile: certs.file('ca.crt') } }), {
      UPSTREAM_URL: upstream.url,
    });
    expect(err).toBeInstanceOf(StoreConfigError);
    expect(err.message).toMatch(
      new RegExp(
        `^redis store rediss://${USER}:\\*\\*\\*@127\\.0\\.0\\.1:${tlsRedis.port}: TLS certificate refused \\(ERR_TLS_CERT_ALTNAME_INVALID: `,
      ),
    );
  });

  test('without the CA the certificate is not trusted: the start fails', async ({ tlsRedis, upstream }) => {
    const err = await startError(config({ url: tlsRedis.url(), tls: { serverName: SERVER_NAME } }), {
      UPSTREAM_URL: upstream.url,
    });
    expect(err).toBeInstanceOf(StoreConfigError);
    expect(err.message).toMatch(
      /: TLS certificate refused \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN): /,
    );
  });

  test('a missing CA file fails the start with the field and the file', async ({ tlsRedis, upstream }) => {
    const err = await startError(
      config({ url: tlsRedis.url(), tls: { caFile: '/nonexistent/ca.pem', serverName: SERVER_NAME } }),
      { UPSTREAM_URL: upstream.url },
    );
    expect(err.message).toMatch(/^store\.redis\.tls\.caFile: cannot read \/nonexistent\/ca\.pem: ENOENT/);
  });

  test('`tollgate start` with a wrong password: a clear error naming the store, exit 1, and the password nowhere', async ({
    certs,
    tlsRedis,
    upstream,
  }) => {
    const wrong = 'Wr0ng-Passw0rd-4711';
    const file = join(certs.dir, 'wrong-password.yaml');
    writeFileSync(
      file,
      config({ url: tlsRedis.url(wrong), tls: { caFile: certs.file('ca.crt'), serverName: SERVER_NAME } }),
    );
    const result = await runCli(['start', '--config', file], { env: { UPSTREAM_URL: upstream.url } });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `cannot start: redis store rediss://${USER}:***@127.0.0.1:${tlsRedis.port}: authentication failed ` +
        '(WRONGPASS invalid username-password pair or user is disabled.)\n',
    );
    for (const output of [result.stdout, result.stderr]) {
      expect(output).not.toContain(wrong);
      expect(output).not.toContain(PASSWORD);
    }
  });

  test('with workers, the primary fails the same way before forking any (they would be restarted forever)', async ({
    certs,
    tlsRedis,
    upstream,
  }) => {
    const wrong = 'Wr0ng-W0rkers-Pw';
    const file = join(certs.dir, 'wrong-password-workers.yaml');
    const yaml = config({
      url: tlsRedis.url(wrong),
      tls: { caFile: certs.file('ca.crt'), serverName: SERVER_NAME },
    });
    writeFileSync(file, yaml.replace('store:', 'workers: 2\nstore:'));
    const result = await runCli(['start', '--config', file], { env: { UPSTREAM_URL: upstream.url } });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `cannot start: redis store rediss://${USER}:***@127.0.0.1:${tlsRedis.port}: authentication failed ` +
        '(WRONGPASS invalid username-password pair or user is disabled.)\n',
    );
    expect(result.stdout).not.toContain('started workers');
    expect(result.stdout + result.stderr).not.toContain(wrong);
  });
});

const clusterTest = test.extend('tlsCluster', { scope: 'file' }, async ({ certs }, { onCleanup }) => {
  const cluster = await TlsRedisCluster.start(certs);
  onCleanup(() => cluster.stop());
  return cluster;
});

describe('Redis Cluster over TLS', () => {
  clusterTest(
    'rediss:// seeds with an ACL user: every node reached over TLS, requests counted',
    async ({ certs, tlsCluster, upstream, gateways }) => {
      const gateway = await gateways.start(
        config({
          cluster: tlsCluster.seeds(),
          tls: { caFile: certs.file('ca.crt'), serverName: SERVER_NAME },
        }),
        { UPSTREAM_URL: upstream.url },
      );
      expect((await send(`${gateway.url()}/readyz`)).status).toBe(200);
      await expectCounted(gateway.url());
      const counts = await Promise.all(
        tlsCluster.nodes.map(async (node) => {
          const c = node.client(certs);
          try {
            const keys = await c.keys('tg:*:per-ip:60000:ip');
            return keys.length === 1 ? await c.get(keys[0]!) : null;
          } finally {
            c.disconnect();
          }
        }),
      );
      expect(counts.filter((c) => c !== null)).toEqual(['3']);
    },
  );

  clusterTest(
    'a wrong password fails the start, naming the cluster without the password',
    async ({ certs, tlsCluster, upstream }) => {
      const wrong = 'Wr0ng-Cluster-Pw';
      const err = await startError(
        config({
          cluster: tlsCluster.seeds(wrong),
          tls: { caFile: certs.file('ca.crt'), serverName: SERVER_NAME },
        }),
        { UPSTREAM_URL: upstream.url },
      );
      expect(err).toBeInstanceOf(StoreConfigError);
      expect(err.message).toMatch(
        /^redis cluster store rediss:\/\/tollgate:\*\*\*@127\.0\.0\.1:\d+,.*: authentication failed \(WRONGPASS /,
      );
      expect(err.message).not.toContain(wrong);
    },
  );
});
