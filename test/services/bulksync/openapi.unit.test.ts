import { expect } from 'vitest';
import { bulkSyncService } from '../../../src/services/bulksync/service.js';
import { buildService } from '../../../src/services/registry.js';
import { servicesTest } from '../../helpers/fixtures.js';

const test = servicesTest.extend('app', { scope: 'file' }, async ({ services }, { onCleanup }) => {
  const app = await buildService('bulksync', services);
  onCleanup(() => app.close());
  return app;
});

test('the OpenAPI fragment describes exactly the routes the service registers', ({ app }) => {
  const registered: string[] = [];
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
