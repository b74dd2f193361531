// The folder order of CONTRIBUTING.md's code map, checked on the real import graph of src/: a
// folder imports only folders below it in its own wing, and the shared floor; the services wing
// and the gateway never import each other. Type-only imports count too (as for madge): a type
// pulls its file's layer in as much as a value does.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, test } from 'vitest';

/**
 * The code map, lowest first within each wing. An entry is a folder of src/ or one file (which
 * then stands apart from its folder: `rules/model.ts`, types only, sits under everything that
 * `rules/compile.ts` compiles with).
 */
const CODE_MAP = {
  /** What both wings share; each imports only the shared entries before it. */
  shared: ['credentials', 'net', 'service-names.ts'],
  /** The gateway: the request path up to http/, then the process (runtime/). */
  gateway: [
    'logger.ts',
    'config',
    'metrics',
    'rules/model.ts',
    'routing',
    'identity',
    'limits/window-maths',
    'store',
    'limits',
    'cors',
    'proxy',
    'envoy',
    'rules',
    'http',
    'runtime',
  ],
  /** The embedded services: they know the gateway only as the upstream in front of them. */
  services: ['db', 'services'],
  /** Where the two wings meet: may import anything. */
  top: ['cli', 'cli.ts'],
} as const;

type Wing = keyof typeof CODE_MAP;
interface Place {
  readonly wing: Wing;
  readonly rank: number;
  readonly entry: string;
}

/** The code map entry of a file (path relative to src/, with "/"): a file entry before its folder. */
function placeOf(file: string): Place | undefined {
  let best: Place | undefined;
  for (const wing of Object.keys(CODE_MAP) as Wing[]) {
    CODE_MAP[wing].forEach((entry: string, rank) => {
      const hit = entry.endsWith('.ts') ? file === entry : file.startsWith(`${entry}/`);
      if (hit && (!best || entry.length > best.entry.length)) best = { wing, rank, entry };
    });
  }
  return best;
}

/** Whether the code map lets `from` import `to`. */
function allowed(from: Place, to: Place): boolean {
  if (from.entry === to.entry || from.wing === 'top') return true;
  if (to.wing === 'shared') return from.wing !== 'shared' || to.rank < from.rank;
  return to.wing === from.wing && to.rank < from.rank;
}

/** Every import the code map forbids, as "from -> to (why)"; files outside the map are reported too. */
function violations(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const found: string[] = [];
  for (const [from, targets] of graph) {
    const here = placeOf(from);
    if (!here) {
      found.push(`${from}: not in the code map`);
      continue;
    }
    for (const to of targets) {
      const there = placeOf(to);
      if (!there) found.push(`${from} -> ${to}: not in the code map`);
      else if (!allowed(here, there)) {
        found.push(
          `${from} -> ${to} (${here.wing} ${here.entry} may not import ${there.wing} ${there.entry})`,
        );
      }
    }
  }
  return found;
}

/** The relative module specifiers of a source text: static imports and re-exports, and import(). */
function importsOf(source: string): string[] {
  const specifiers = [
    ...source.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s*['"]([^'"]+)['"]/gms),
    ...source.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm),
    ...source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]!);
  return [...new Set(specifiers)].filter((s) => s.startsWith('.'));
}

/** The project's own import graph: each file of src/ (relative to it) and the files it imports. */
function sourceGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  for (const file of files.map((f) => f.split('\\').join('/'))) {
    const targets = importsOf(readFileSync(join(root, file), 'utf8')).map((spec) =>
      relative(root, normalize(join(root, dirname(file), spec.replace(/\.js$/, '.ts'))))
        .split('\\')
        .join('/'),
    );
    graph.set(file, targets);
  }
  return graph;
}

const SRC = join(import.meta.dirname, '..', '..', 'src');
const graphOf = (edges: Record<string, string[]>) => new Map(Object.entries(edges));

describe('the folder order', () => {
  test('src/ keeps it: no folder imports one above it, and the wings meet only in the CLI', () => {
    const graph = sourceGraph(SRC);
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('runtime/gateway.ts')).toContain('http/request-handler.ts');
    expect(violations(graph)).toEqual([]);
  });

  test('allows imports down the gateway, into the shared floor, and anything from the CLI', () => {
    const graph = graphOf({
      'runtime/gateway.ts': ['http/request-handler.ts', 'envoy/service.ts', 'runtime/listen.ts'],
      'http/request-handler.ts': ['rules/compile.ts', 'limits/decision.ts', 'net/client-ip.ts'],
      'limits/plan.ts': ['rules/model.ts', 'store/window-store.ts'],
      'rules/compile.ts': ['envoy/descriptor-table.ts', 'rules/model.ts', 'config/schema.ts'],
      'services/widget/auth.ts': ['credentials/visitor-jwt.ts', 'db/database.ts', 'service-names.ts'],
      'identity/resolve.ts': ['credentials/bearer.ts', 'net/client-ip.ts'],
      'credentials/bearer.ts': [],
      'cli/wiring.ts': ['runtime/gateway.ts', 'services/embedded.ts'],
      'cli.ts': ['cli/start.ts'],
    });
    expect(violations(graph)).toEqual([]);
  });

  test('catches a folder that imports one above it', () => {
    const graph = graphOf({
      'limits/plan.ts': ['http/responses.ts'],
      'http/request-handler.ts': ['runtime/gateway.ts'],
      'envoy/service.ts': ['runtime/listen.ts'],
      'config/load.ts': ['rules/compile.ts'],
    });
    expect(violations(graph)).toEqual([
      'limits/plan.ts -> http/responses.ts (gateway limits may not import gateway http)',
      'http/request-handler.ts -> runtime/gateway.ts (gateway http may not import gateway runtime)',
      'envoy/service.ts -> runtime/listen.ts (gateway envoy may not import gateway runtime)',
      'config/load.ts -> rules/compile.ts (gateway config may not import gateway rules)',
    ]);
  });

  test('holds a file entry apart from its folder: the model imports nothing of the compiler', () => {
    expect(violations(graphOf({ 'rules/model.ts': ['rules/compile.ts'] }))).toEqual([
      'rules/model.ts -> rules/compile.ts (gateway rules/model.ts may not import gateway rules)',
    ]);
    expect(violations(graphOf({ 'rules/compile.ts': ['rules/load.ts'] }))).toEqual([]);
  });

  test('keeps the wings apart, and the shared floor under both', () => {
    const graph = graphOf({
      'services/registry.ts': ['identity/hash.ts', 'runtime/gateway.ts'],
      'http/state.ts': ['services/embedded.ts', 'db/database.ts'],
      'net/client-ip.ts': ['identity/hash.ts', 'credentials/bearer.ts'],
      'credentials/bearer.ts': ['net/client-ip.ts'],
      'db/database.ts': ['services/config.ts'],
      'runtime/gateway.ts': ['cli/wiring.ts'],
    });
    expect(violations(graph)).toEqual([
      'services/registry.ts -> identity/hash.ts (services services may not import gateway identity)',
      'services/registry.ts -> runtime/gateway.ts (services services may not import gateway runtime)',
      'http/state.ts -> services/embedded.ts (gateway http may not import services services)',
      'http/state.ts -> db/database.ts (gateway http may not import services db)',
      'net/client-ip.ts -> identity/hash.ts (shared net may not import gateway identity)',
      'credentials/bearer.ts -> net/client-ip.ts (shared credentials may not import shared net)',
      'db/database.ts -> services/config.ts (services db may not import services services)',
      'runtime/gateway.ts -> cli/wiring.ts (gateway runtime may not import top cli)',
    ]);
  });

  test('names a folder the code map does not place', () => {
    const graph = graphOf({ 'extras/thing.ts': [], 'http/state.ts': ['extras/thing.ts'] });
    expect(violations(graph)).toEqual([
      'extras/thing.ts: not in the code map',
      'http/state.ts -> extras/thing.ts: not in the code map',
    ]);
  });
});

/** The rows of CONTRIBUTING.md's code map table that follows `heading`, as code map entries. */
function documentedOrder(heading: string): string[] {
  const text = readFileSync(join(import.meta.dirname, '..', '..', 'CONTRIBUTING.md'), 'utf8');
  const table = text.slice(text.indexOf(heading)).split('\n\n')[1]!;
  return [...table.matchAll(/^\| `src\/([^`]+?)\/?` /gm)].map((m) => m[1]!).filter((e) => !e.includes('/'));
}

test("CONTRIBUTING.md's code map lists the folders in this order", () => {
  expect(documentedOrder('What both sides share')).toEqual(CODE_MAP.shared);
  expect(documentedOrder('The gateway, lowest first')).toEqual(
    CODE_MAP.gateway.filter((e) => !e.includes('/')), // a file or subfolder standing apart: in its folder's row
  );
  expect(documentedOrder('The embedded services, lowest first')).toEqual(CODE_MAP.services);
});

describe('importsOf', () => {
  test('reads static, type-only, multi-line and dynamic imports and re-exports; not packages', () => {
    const source = [
      "import { readFileSync } from 'node:fs';",
      "import type { GatewayState } from './state.js';",
      'import {',
      '  countRequest,',
      '  type Limiting,',
      "} from './count-request.js';",
      "import './side-effect.js';",
      "export { visitorIp } from '../services/websites/analytics/visitor-ip.js';",
      "export type { RuleTable } from '../rules/compile.js';",
      "const server = await import('./rate-limit-server.js');",
      "const text = 'import nothing from here';",
    ].join('\n');
    expect(importsOf(source)).toEqual([
      './state.js',
      './count-request.js',
      '../services/websites/analytics/visitor-ip.js',
      '../rules/compile.js',
      './side-effect.js',
      './rate-limit-server.js',
    ]);
  });
});
