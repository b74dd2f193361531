// The docs tooling: docs/configuration.md as rendered from the real schema and default config, and
// the checks of `npm run docs:check` on small markdown inputs, each problem it must catch.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { configSchema } from '../../src/config/schema.js';
import { limiter } from '../../src/config/schema/limiter.js';
import {
  configFields,
  envReferences,
  escapeMarkdown,
  headingAnchor,
  renderConfigDocs,
  type JsonSchema,
} from '../../scripts/config-docs.js';
import {
  checkCommands,
  checkLinks,
  gatewayConfigs,
  parseUsage,
  placeholderEnv,
  scanMarkdown,
} from '../../scripts/docs-lint.js';
import { loadConfigText } from '../../src/rules/load.js';

const GATEWAY_YAML = readFileSync(new URL('../../config/gateway.yaml', import.meta.url), 'utf8');
const schema = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
const rendered = renderConfigDocs({
  schema,
  defaultConfig: { name: 'config/gateway.yaml', link: '../config/gateway.yaml', text: GATEWAY_YAML },
  intro: 'Intro.',
});
const renderedAnchors = scanMarkdown(rendered).anchors;

describe('docs/configuration.md, rendered from the schema', () => {
  test('every field has a heading, a type line and a description', () => {
    const fields = configFields(schema);
    expect(fields.length).toBeGreaterThan(80);
    const undescribed = fields.filter((f) => !f.schema.description).map((f) => f.path);
    expect(undescribed).toEqual([]);
    for (const f of fields) expect(renderedAnchors.has(headingAnchor(f.path)), f.path).toBe(true);
  });

  test('defaults read as they are written: durations, sizes, lists, required and optional fields', () => {
    const entry = (path: string) => {
      const start = rendered.indexOf(`\`${path}\`\n`);
      return rendered.slice(start, rendered.indexOf('\n\n', rendered.indexOf('\n\n', start) + 2));
    };
    expect(entry('store.redis.commandTimeout')).toContain('_duration · default `50ms`_');
    expect(entry('services.maxBodySize')).toContain('_size · default `5mb`_');
    expect(entry('identity.trustedProxies')).toContain(
      '_list of strings, or a comma-separated string · default `[]`_',
    );
    expect(entry('routes[].paths')).toContain('_list of path patterns (at least 1) · required_');
    expect(entry('identity.jwt.issuer')).toContain('_string · optional_');
    expect(entry('workers')).toContain('_`"auto"` or integer 1–256 · default `1`_');
  });

  test('inline limiters point at the limiter fields instead of repeating them', () => {
    // Every field of a named limiter, in the schema's order, then the link.
    const fields = Object.keys(limiter.shape).map((f) => `\`${f}\``);
    expect(rendered).toContain(
      `Its objects also take ${fields.join(', ')}, as in [\`limiters.<name>\`](#limiters).`,
    );
    expect(rendered).not.toContain('### `routes[].limiters[].windows`');
  });

  test('every ${VAR} of config/gateway.yaml is listed with its default and a link to its field', () => {
    const refs = envReferences(GATEWAY_YAML);
    const variables = new Set(refs.map((r) => r.variable));
    expect(variables.size).toBeGreaterThan(20);
    const section = rendered.slice(rendered.indexOf('## Environment variables of `config/gateway.yaml`'));
    for (const variable of variables) expect(section).toContain(`- \`${variable}\` (`);
    expect(section).toContain(
      '- `PORT` (default `8080`) sets [`listeners[].port`](#listenersport) (in `public`)',
    );
    expect(section).toContain(
      '- `DATA_DIR` (default `./data`) sets [`identity.jwt.secretFile`](#identityjwtsecretfile), [`services.dataDir`](#servicesdatadir)',
    );
    expect(section).toContain(
      '- `WIDGET_UPSTREAM` (default: empty) sets [`upstreams.widget.url`](#upstreamsnameurl)',
    );
    for (const m of section.matchAll(/\]\(#([^)]+)\)/g)) expect(renderedAnchors.has(m[1]!), m[1]).toBe(true);
  });

  test('envReferences: the schema path, the list item it sits in, and references without a default', () => {
    const yaml = 'a:\n  b: ${ONE}\nroutes:\n  - name: r1\n    x: "${TWO:-2}/${THREE:-}"\n';
    expect(envReferences(yaml)).toEqual([
      { variable: 'ONE', fallback: undefined, field: 'a.b', within: undefined },
      { variable: 'TWO', fallback: '2', field: 'routes[].x', within: 'r1' },
      { variable: 'THREE', fallback: '', field: 'routes[].x', within: 'r1' },
    ]);
  });

  test('descriptions are escaped for markdown, code spans kept', () => {
    expect(escapeMarkdown('"*", "<id>|<secret>" and `a*b_c`')).toBe(
      '"\\*", "\\<id\\>\\|\\<secret\\>" and `a*b_c`',
    );
  });
});

describe('npm run docs:check', () => {
  const files = new Set(['README.md', 'docs/limiting.md', 'config/gateway.yaml', 'test/unit/x.test.ts']);
  const exists = (path: string) => files.has(path);
  const anchors = new Map([
    ['docs/limiting.md', scanMarkdown('# Limiting\n## Key parts\n## Key parts\n').anchors],
  ]);

  test('anchors follow GitHub: punctuation dropped, repeats numbered, code and links unwrapped', () => {
    const { anchors: found } = scanMarkdown(
      '# A `b.c` [link](x.md)\n## Kubernetes: tollgate as a sidecar\n## Same\n## Same\n```\n# not a heading\n```\n',
    );
    expect([...found]).toEqual(['a-bc-link', 'kubernetes-tollgate-as-a-sidecar', 'same', 'same-1']);
  });

  test('a link to a missing file or anchor is a problem; external links and good ones are not', () => {
    const text = [
      '[ok](docs/limiting.md#key-parts-1) [ok](docs/limiting.md) [ok](#here) [web](https://example.com/x)',
      '[gone](docs/nope.md) [bad anchor](docs/limiting.md#keys) [up](../outside.md)',
      '`[not a link](nope.md)`',
      '## Here',
    ].join('\n');
    const file = { path: 'README.md', text };
    const scanned = scanMarkdown(text);
    const own = new Map([...anchors, ['README.md', scanned.anchors]]);
    expect(checkLinks(file, scanned, exists, (p) => own.get(p))).toEqual([
      'README.md:2: link to a missing file: docs/nope.md',
      'README.md:2: link to a missing anchor: docs/limiting.md#keys',
      'README.md:2: link to a missing file: ../outside.md',
    ]);
  });

  const usage = parseUsage(`usage:
  tollgate start   --config FILE
  tollgate serve   websites|reports|widget|bulksync --port N [--host H] [--config FILE]
  tollgate tokens  create --workspace NAME [--config FILE]
  tollgate tokens  revoke ID [--config FILE]`);
  const scripts = new Set(['start', 'test', 'schema']);

  test('commands shown must exist: npm scripts, tollgate subcommands, their actions and options', () => {
    const text = [
      '```sh',
      'npm ci && npm start',
      'npm run schema   # fine',
      '# npm run commented-out is output, not a command',
      'npm run bench',
      'node dist/cli.js tokens create --workspace demo',
      'DATA_DIR=/var/lib/tollgate node dist/cli.js serve reports --host 0.0.0.0 --port 8082',
      'tollgate tokens list',
      'tollgate serve mail',
      'docker run -v tollgate-data:/data tollgate users create --name ops',
      'tollgate start --config x.yaml --watch',
      'npx vitest run test/unit/x.test.ts && npx vitest run test/unit/y.test.ts',
      '```',
      'Run `tollgate check --config FILE` or `npm test`.',
    ].join('\n');
    const file = { path: 'README.md', text };
    expect(checkCommands(file, scanMarkdown(text), scripts, usage, exists)).toEqual([
      'README.md:14: "tollgate check" is not in the CLI usage: tollgate check --config FILE',
      'README.md:5: npm script "bench" does not exist: npm run bench',
      'README.md:8: "tollgate tokens list" is not in the CLI usage: tollgate tokens list',
      'README.md:9: "tollgate serve mail" is not in the CLI usage: tollgate serve mail',
      'README.md:10: "tollgate users" is not in the CLI usage: docker run -v tollgate-data:/data tollgate users create --name ops',
      'README.md:11: "tollgate start" has no option --watch: tollgate start --config x.yaml --watch',
      'README.md:12: no test file test/unit/y.test.ts: npx vitest run test/unit/x.test.ts && npx vitest run test/unit/y.test.ts',
    ]);
  });

  test('YAML blocks that are whole gateway configs are found and loaded with placeholders', () => {
    const good =
      'listeners:\n  - port: 8080\nupstreams:\n  app: { url: "${APP_URL}" }\nroutes:\n  - { name: r, paths: [/x], upstream: app }';
    const bad = good.replace('upstream: app', 'upstream: ghost');
    const text = [
      '```yaml',
      good,
      '```',
      '```yaml',
      'services:\n  redis: {}',
      '```',
      '```yaml',
      bad,
      '```',
    ].join('\n');
    const blocks = gatewayConfigs(scanMarkdown(text));
    expect(blocks.map((b) => b.line)).toEqual([1, 13]);
    expect(placeholderEnv(good)).toEqual({ APP_URL: 'example-app_url' });
    expect(() => loadConfigText(good, 'good', { APP_URL: 'http://127.0.0.1:3000' })).not.toThrow();
    expect(() => loadConfigText(bad, 'bad', { APP_URL: 'http://127.0.0.1:3000' })).toThrow(
      'routes[0].upstream: unknown upstream "ghost"',
    );
  });
});
