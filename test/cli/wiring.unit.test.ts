import { describe, expect, test } from 'vitest';
import { servicesConfigFrom } from '../../src/cli/services-config.js';
import { loadConfigText } from '../../src/rules/load.js';
import { DEFAULT_CONFIG } from '../helpers/default-config.js';

describe('the services config', () => {
  test('holds what the services read and nothing of the gateway (routes, limits, store, listeners)', () => {
    const { config } = loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', {
      PORT: '0',
      ADMIN_PORT: '0',
      DATA_DIR: '/srv/tollgate',
      BOOTSTRAP_API_KEYS: 'k1,k2',
      WIDGET_JWT_SECRET: 'a-secret',
      BOOTSTRAP_WORKSPACE_TOKEN: 'boot|secret',
      WEBSITES_PUBLIC_URL: 'https://api.example.com/',
      REPORTS_PUBLIC_URL: 'http://Analyzer.example.com',
    });
    expect(servicesConfigFrom(config)).toEqual({
      dataDir: '/srv/tollgate',
      bootstrapApiKeys: ['k1', 'k2'],
      maxBodySize: 5 * 1024 * 1024,
      websites: { publicUrl: 'https://api.example.com' },
      reports: {
        publicUrl: 'http://analyzer.example.com',
        allowPrivateNetworks: false,
        fetchTimeout: 10_000,
        maxRedirects: 5,
        maxPageSize: 5 * 1024 * 1024,
        analysisTimeout: 20_000,
        analysisQueue: 64,
      },
      bulksync: {
        bootstrapToken: 'boot|secret',
        bootstrapWorkspace: 'default',
        maxBodyBytes: 5 * 1024 * 1024,
      },
      pages: {
        secretFile: '',
        sessionTtl: 43_200_000,
        unlockTtl: 3_600_000,
        exports: { perAddress: 2, total: 8, stallTimeout: 30_000 },
      },
      emailReports: {
        smtp: undefined,
        frequency: 'weekly',
        checkInterval: 300_000,
        retries: 3,
        retryDelay: 30_000,
      },
      widget: { sessionsPerWorkspace: 20_000, messagesPerWorkspace: 200_000, budgetPeriod: 3_600_000 },
      storage: {
        maxDistinctValues: 1000,
        recentVisits: 1_800_000,
        widgetEvents: 90 * 86_400_000,
        walCheckpointSize: 16 * 1024 * 1024,
        housekeepingInterval: 60_000,
      },
      trustedProxies: [],
      visitorJwt: config.identity.jwt,
    });
    expect(servicesConfigFrom(config).visitorJwt).toMatchObject({
      secret: 'a-secret',
      algorithms: ['HS256'],
    });
  });

  test('SMTP from the environment: the reports settings carry it; a host unset turns them off', () => {
    const { config } = loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', {
      PORT: '0',
      ADMIN_PORT: '0',
      TRUSTED_PROXIES: '10.0.0.0/8',
      SMTP_HOST: 'smtp.example.com',
      SMTP_PORT: '465',
      SMTP_TLS: 'secure',
      SMTP_USER: 'reports',
      SMTP_PASSWORD: 'pw',
      SMTP_FROM: 'Stats <stats@example.com>',
      EMAIL_REPORTS_FREQUENCY: 'monthly',
    });
    const services = servicesConfigFrom(config);
    expect(services.emailReports).toEqual({
      smtp: {
        host: 'smtp.example.com',
        port: 465,
        tls: 'secure',
        user: 'reports',
        password: 'pw',
        from: 'Stats <stats@example.com>',
      },
      frequency: 'monthly',
      checkInterval: 300_000,
      retries: 3,
      retryDelay: 30_000,
    });
    expect(services.trustedProxies).toEqual(['10.0.0.0/8']);
  });

  test("bulk sync's body limit is the wp-plugin route's when that is smaller", () => {
    const { config } = loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', { PORT: '0', ADMIN_PORT: '0' });
    const routes = config.routes.map((r) => (r.name === 'wp-plugin' ? { ...r, maxBodySize: 2048 } : r));
    expect(servicesConfigFrom({ ...config, routes }).bulksync.maxBodyBytes).toBe(2048);
  });
});
