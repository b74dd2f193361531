import { afterAll, beforeAll, expect, test } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { servicesConfigFrom } from '../../../src/cli/services-config.js';
import { loadConfigText } from '../../../src/rules/load.js';
import type { Db } from '../../../src/db/database.js';
import { bulkSyncService } from '../../../src/services/bulksync/service.js';
import { buildService, openServiceDatabase } from '../../../src/services/registry.js';
import { DEFAULT_CONFIG } from '../../helpers/default-config.js';
import { embeddedEnv, newDataDir } from '../../helpers/embedded.js';
import { silentLogger } from '../../helpers/gateway.js';

let db: Db;
let app: FastifyInstance;
const registered: string[] = [];

beforeAll(async () => {
  const config = servicesConfigFrom(
    loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', embeddedEnv(newDataDir())).config,
  );
  db = openServiceDatabase(config, silentLogger);
  app = await buildService('bulksync', {
    db,
    config,
    logger: silentLogger,
  });
});
afterAll(async () => {
  await app?.close();
  db?.close();
});

test('the OpenAPI fragment describes exactly the routes the service registers', () => {
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /(\/\S+) \((.+)\)/.exec(line);
    if (m) for (const method of m[2]!.split(', ')) registered.push(`${method} ${m[1]}`);
  }
  const described = Object.entries(bulkSyncService.openapi.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
  );
  expect(described.sort()).toEqual(registered.sort());
  // Six endpoints, each under /v1/wp and /api/v1/wp.
  expect(registered).toHaveLength(12);
});

test('every operation needs a workspace token and answers errors as WidgetError', () => {
  for (const operations of Object.values(bulkSyncService.openapi.paths)) {
    for (const op of Object.values(operations) as {
      security: unknown;
      responses: Record<string, unknown>;
    }[]) {
      expect(op.security).toEqual([{ workspaceToken: [] }]);
      for (const [status, response] of Object.entries(op.responses)) {
        if (status === '200') continue;
        expect(response).toMatchObject({
          content: { 'application/json': { schema: { $ref: '#/components/schemas/WidgetError' } } },
        });
      }
    }
  }
});
