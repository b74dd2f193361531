// The lint rule that keeps the gateway and the embedded services apart (eslint.config.js), tried
// on the imports that would break the boundary.
import { ESLint } from 'eslint';
import { describe, expect, test } from 'vitest';

const eslint = new ESLint();

/** The rules that `code` breaks when it is the file `filePath`. */
async function broken(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((m) => `${m.ruleId}: ${m.line}`);
}

describe('the gateway folders', () => {
  test.each([
    'http',
    'runtime',
    'proxy',
    'config',
    'identity',
    'store',
    'routing',
    'limits',
    'metrics',
    'cors',
  ])('src/%s imports nothing of the services, their database or their packages', async (folder) => {
    const code = [
      "import { EmbeddedServices } from './services/embedded.js';",
      "import type { Db } from './db/database.js';",
      "import Fastify from 'fastify';",
      "import Database from 'better-sqlite3';",
      "import { start } from './cli/start.js';",
      'export const probe = [EmbeddedServices, Fastify, Database, start, {} as Db];',
    ].join('\n');
    expect(await broken(`src/${folder}/probe.ts`, code)).toEqual([
      'no-restricted-imports: 1',
      'no-restricted-imports: 2',
      'no-restricted-imports: 3',
      'no-restricted-imports: 4',
      'no-restricted-imports: 5',
    ]);
  });

  test('nor loads them with import()', async () => {
    const code = "export const load = () => import('./services/embedded.js');";
    expect(await broken('src/http/probe.ts', code)).toEqual(['no-restricted-syntax: 1']);
  });

  test('may use the credential formats and the interface the CLI implements', async () => {
    const code = [
      "import { bearerToken } from './credentials/bearer.js';",
      "import type { EmbeddedUpstreams } from './unit/embedded-upstreams.js';",
      'export const probe = (e: EmbeddedUpstreams) => [e, bearerToken];',
    ].join('\n');
    expect(await broken('src/runtime/probe.ts', code)).toEqual([]);
  });
});

describe('the services', () => {
  test("import none of the gateway's internals", async () => {
    const code = [
      "import { Gateway } from './runtime/gateway.js';",
      "import type { GatewayConfig } from './config/schema.js';",
      "import { hashPart } from '../identity/hash.js';",
      "import { UpstreamPool } from './proxy/upstream-pool.js';",
      "import { CatalogueStore } from './unit/store.js';",
      "import { sha256 } from '../credentials/digest.js';",
      'export const probe = [Gateway, hashPart, UpstreamPool, CatalogueStore, sha256, {} as GatewayConfig];',
    ].join('\n');
    expect(await broken('src/services/bulksync/probe.ts', code)).toEqual([
      'no-restricted-imports: 1',
      'no-restricted-imports: 2',
      'no-restricted-imports: 3',
      'no-restricted-imports: 4',
    ]);
  });
});

test('the credential formats depend on neither side', async () => {
  const code = [
    "import { hashPart } from './identity/hash.js';",
    "import { prepared } from './db/statements.js';",
    'export const probe = [hashPart, prepared];',
  ].join('\n');
  expect(await broken('src/credentials/probe.ts', code)).toEqual([
    'no-restricted-imports: 1',
    'no-restricted-imports: 2',
  ]);
});

describe('the client-address walk (src/net/)', () => {
  test.each(['src/identity/probe.ts', 'src/services/websites/analytics/probe.ts'])(
    '%s may use it',
    async (file) => {
      const depth = file.split('/').length - 2;
      const code = [
        `import { walkForwardedFor } from '${'../'.repeat(depth)}net/client-ip.js';`,
        'export const probe = [walkForwardedFor];',
      ].join('\n');
      expect(await broken(file, code)).toEqual([]);
    },
  );

  test('depends on neither side', async () => {
    const code = [
      "import { hashPart } from './identity/hash.js';",
      "import { prepared } from './db/statements.js';",
      "import { visitorIp } from './services/websites/analytics/visitor-ip.js';",
      "import Fastify from 'fastify';",
      "export const load = () => import('./runtime/gateway.js');",
      'export const probe = [hashPart, prepared, visitorIp, Fastify];',
    ].join('\n');
    expect(await broken('src/net/probe.ts', code)).toEqual([
      'no-restricted-imports: 1',
      'no-restricted-imports: 2',
      'no-restricted-imports: 3',
      'no-restricted-imports: 4',
      'no-restricted-syntax: 5',
    ]);
  });
});

test('the CLI is where the two meet', async () => {
  const code = [
    "import { Gateway } from './runtime/gateway.js';",
    "import { EmbeddedServices } from './services/embedded.js';",
    'export const probe = [Gateway, EmbeddedServices];',
  ].join('\n');
  expect(await broken('src/cli/probe.ts', code)).toEqual([]);
});
