import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect } from 'vitest';
import { SERVICE_NAMES } from '../../../src/service-names.js';
import { servicesConfigFrom } from '../../../src/cli/services-config.js';
import { loadConfigText } from '../../../src/rules/load.js';
import { createServiceApp } from '../../../src/services/kit/app.js';
import { SERVICES, servicesOpenApi } from '../../../src/services/registry.js';
import { DEFAULT_CONFIG } from '../../helpers/default-config.js';
import { ALICE_KEY, embeddedEnv } from '../../helpers/embedded.js';
import { embeddedTest } from '../../helpers/fixtures.js';
import { send, silentLogger } from '../../helpers/gateway.js';

const test = embeddedTest();

const CHECKED_IN = readFileSync(new URL('../../../docs/openapi.json', import.meta.url), 'utf8');

/** "GET /api/v1/websites/{id}" for each operation of a fragment. */
function documentedOperations(paths: Record<string, Record<string, unknown>>): string[] {
  return Object.entries(paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
  );
}

describe('the OpenAPI document', () => {
  test('is valid OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(servicesOpenApi() as Record<string, unknown>);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  test('checked in under docs/ is the one the code generates (npm run schema)', () => {
    expect(CHECKED_IN).toBe(`${JSON.stringify(servicesOpenApi(), null, 2)}\n`);
  });

  test.for(SERVICE_NAMES)(
    'lists exactly the routes the %s service registers',
    async (name, { dataDir, db }) => {
      const config = servicesConfigFrom(
        loadConfigText(DEFAULT_CONFIG, 'test.yaml', embeddedEnv(dataDir)).config,
      );
      const app = createServiceApp({ logger: silentLogger, errors: SERVICES[name].errors, bodyLimit: 1024 });
      const registered: string[] = [];
      app.addHook('onRoute', (route) => {
        // The HTML pages are documented in docs/services/websites.md and reports.md, not here.
        if (route.config?.page) return;
        // The reports hint's catch-alls only answer a 404 (reports-hint.ts): no operation.
        if (route.config?.notFoundHint) return;
        for (const method of [route.method].flat()) {
          if (method !== 'HEAD') registered.push(`${method} ${route.url.replace(/:(\w+)/g, '{$1}')}`);
        }
      });
      await SERVICES[name].register(app, { db, config, logger: silentLogger });
      await app.ready();
      await app.close();
      expect(registered.length).toBeGreaterThan(0);
      expect(documentedOperations(SERVICES[name].openapi.paths).sort()).toEqual(registered.sort());
    },
  );

  test.for([
    ['the websites host', 'localhost'],
    ['the analyzer host', 'analyzer.localhost'],
  ] as const)('is served at /api/v1/openapi.json on %s, without a key', async ([, host], { gateway }) => {
    const reply = await send(`${gateway.url()}/api/v1/openapi.json`, { headers: { host } });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(reply.json()).toEqual(JSON.parse(CHECKED_IN));
    // The key is not needed, and not refused either.
    const keyed = await send(`${gateway.url()}/api/v1/openapi.json`, {
      headers: { host, authorization: `Bearer ${ALICE_KEY}` },
    });
    expect(keyed.status).toBe(200);
  });
});
