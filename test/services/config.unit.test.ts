import { describe, expect, test } from 'vitest';
import { loadConfigText } from '../../src/rules/load.js';
import { configErrorOf } from '../helpers/config-errors.js';
import { DEFAULT_CONFIG, defaultEnv } from '../helpers/default-config.js';

const withUpstream = (upstream: string, extra = '') => `listeners: [{ port: 0 }]
upstreams:
  app: ${upstream}
routes:
  - name: all
    paths: ["/*"]
    upstream: app
${extra}`;

describe('embedded upstreams and services settings', () => {
  test('an upstream needs a url or an embedded service', () => {
    expect(configErrorOf(withUpstream('{ connections: 4 }'))).toBe(
      'conf.yaml:3:8: upstreams.app.url: set url, or embedded (websites, reports, widget or bulksync) to run a built-in service',
    );
  });

  test('an unknown embedded service is refused', () => {
    expect(configErrorOf(withUpstream('{ embedded: shop }'))).toMatch(
      /^conf\.yaml:3:20: upstreams\.app\.embedded: unknown value "shop"; expected one of websites, reports, widget, bulksync$/,
    );
  });

  test('an empty url falls back to the embedded service; a url wins over it', () => {
    const embedded = loadConfigText(withUpstream('{ url: "", embedded: websites }'), 'c.yaml', {});
    expect(embedded.config.upstreams['app']).toMatchObject({ url: '', embedded: 'websites' });
    const remote = loadConfigText(
      withUpstream('{ url: "http://10.0.0.5:80", embedded: websites }'),
      'c.yaml',
      {},
    );
    expect(remote.config.upstreams['app']?.url).toBe('http://10.0.0.5:80');
  });

  test('sizes read as bytes, or with a unit', () => {
    const table = loadConfigText(
      withUpstream('{ embedded: websites }', '    maxBodySize: 1kb\nservices: { maxBodySize: 2048 }'),
      'c.yaml',
      {},
    );
    expect(table.routes[0]!.maxBodySize).toBe(1024);
    expect(table.config.services.maxBodySize).toBe(2048);
    expect(configErrorOf(withUpstream('{ embedded: websites }', '    maxBodySize: lots'))).toBe(
      'conf.yaml:8:18: routes[0].maxBodySize: not a size: "lots" (use e.g. 512kb, 5mb)',
    );
  });

  test('the shipped config runs every service embedded, with the documented defaults', () => {
    const { HOST, PORT, ADMIN_PORT } = defaultEnv('http://unused');
    const { config, routes } = loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', { HOST, PORT, ADMIN_PORT });
    expect(
      Object.fromEntries(Object.entries(config.upstreams).map(([n, u]) => [n, [u.url, u.embedded]])),
    ).toEqual({
      websites: ['', 'websites'],
      reports: ['', 'reports'],
      widget: ['', 'widget'],
      bulksync: ['', 'bulksync'],
    });
    expect(config.services).toEqual({
      dataDir: './data',
      bootstrapApiKeys: [],
      maxBodySize: 5 * 1024 * 1024,
      websites: { publicUrl: 'http://localhost:8080' },
      reports: {
        publicUrl: 'http://analyzer.localhost:8080',
        allowPrivateNetworks: false,
        fetchTimeout: 10_000,
        maxRedirects: 5,
        maxPageSize: 5 * 1024 * 1024,
        analysisTimeout: 20_000,
        analysisQueue: 64,
      },
      bulksync: { bootstrapToken: '', bootstrapWorkspace: 'default' },
      pages: {
        secretFile: '',
        sessionTtl: 43_200_000,
        unlockTtl: 3_600_000,
        exports: { perAddress: 2, total: 8, stallTimeout: 30_000 },
      },
      smtp: {
        host: '',
        port: 587,
        tls: 'starttls',
        user: '',
        password: '',
        from: 'tollgate <reports@localhost>',
      },
      emailReports: { frequency: 'weekly', checkInterval: 300_000, retries: 3, retryDelay: 30_000 },
      widget: { sessionsPerWorkspace: 20_000, messagesPerWorkspace: 200_000, budgetPeriod: 3_600_000 },
      storage: {
        maxDistinctValues: 1000,
        recentVisits: 1_800_000,
        widgetEvents: 90 * 86_400_000,
        walCheckpointSize: 16 * 1024 * 1024,
        housekeepingInterval: 60_000,
      },
    });
    expect(config.identity.workspaceTokens).toMatchObject({ source: 'database', cacheTtl: 5000 });
    expect(config.identity.jwt?.ttl).toBe(86_400_000);
    expect(routes.find((r) => r.name === 'wp-plugin')?.maxBodySize).toBe(5 * 1024 * 1024);
  });
});
