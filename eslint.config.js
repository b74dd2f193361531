import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import { importX } from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// The folders of the gateway (its request path and its process), and those of the embedded
// services. The two meet only through src/runtime/embedded-upstreams.ts, which the CLI
// (src/cli/wiring.ts) implements, and through the credential formats in src/credentials/
// (CONTRIBUTING.md's code map: "a pure-proxy config never loads the services"). The order of the
// folders within the gateway is test/architecture/layers.unit.test.ts's.
const GATEWAY = [
  'config',
  'rules',
  'routing',
  'identity',
  'limits',
  'store',
  'proxy',
  'http',
  'runtime',
  'metrics',
  'cors',
  'envoy',
];
const SERVICES = ['services', 'db'];
const SERVICE_PACKAGES = ['fastify', '@fastify/*', 'better-sqlite3', 'piscina', 'htmlparser2', 'domutils'];

/** no-restricted-imports (static imports) plus no-restricted-syntax (import()) for these folders. */
function forbid(folders, packages, message) {
  const groups = folders.flatMap((f) => [`**/${f}/*`, `**/${f}/**`]);
  const pattern = folders.join('|');
  return {
    'no-restricted-imports': ['error', { patterns: [{ group: [...groups, ...packages], message }] }],
    'no-restricted-syntax': [
      'error',
      {
        selector: `ImportExpression[source.value=/(^|\\/)(${pattern})\\//]`,
        message,
      },
    ],
  };
}

export default tseslint.config(
  { ignores: ['dist/', 'client/dist/', 'node_modules/', 'coverage/', 'data/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: GATEWAY.map((f) => `src/${f}/**/*.ts`),
    rules: forbid(
      [...SERVICES, 'cli'],
      SERVICE_PACKAGES,
      'The gateway knows the embedded services only through EmbeddedUpstreams (src/runtime/embedded-upstreams.ts), which the CLI wires in.',
    ),
  },
  {
    files: SERVICES.map((f) => `src/${f}/**/*.ts`),
    rules: forbid(
      [...GATEWAY, 'cli'],
      [],
      "The embedded services must not know the gateway's internals: they get a ServicesConfig, and share only src/credentials/.",
    ),
  },
  {
    files: ['src/credentials/**/*.ts'],
    rules: forbid(
      [...GATEWAY, ...SERVICES, 'cli'],
      SERVICE_PACKAGES,
      'src/credentials/ holds formats both sides share: it depends on neither.',
    ),
  },
  {
    // The client-address walk both sides must agree on (the gateway keys limits by it, the collector
    // excludes visits by it), so it lives apart from both.
    files: ['src/net/**/*.ts'],
    rules: forbid(
      [...GATEWAY, ...SERVICES, 'cli'],
      SERVICE_PACKAGES,
      'src/net/ holds the client-address resolution both sides share: it depends on neither.',
    ),
  },
  {
    // @tollgate/client runs in browsers and has no runtime dependencies: no Node built-ins, nothing
    // of the gateway, and undici (an optional peer, for the interceptor's types) as types only.
    files: ['client/src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', '**/../src/*', '**/../src/**', '**/../test/**'],
              message:
                'The client is browser-safe and stands alone: no Node built-ins, nothing of the gateway.',
            },
            {
              group: ['undici'],
              allowTypeImports: true,
              message: 'undici is an optional peer dependency of the client: import its types only.',
            },
          ],
        },
      ],
    },
  },
  {
    // No import circles: a circle ties its files into one unit that loads in an order nobody chose.
    // import-x skips type-only imports: `npm run lint:cycles` (madge) counts them too.
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: 'tsconfig.json' })],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    // vitest reads a fixture's dependencies from its first parameter's pattern: `{}` means none.
    files: ['test/**/*.ts'],
    rules: { 'no-empty-pattern': ['error', { allowObjectPatternsAsParameters: true }] },
  },
  {
    files: ['bench/**/*.js', 'scripts/**/*.js'],
    languageOptions: { globals: globals.node },
  },
);
