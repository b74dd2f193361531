// Writes the generated documents (config/schema.json from the zod schema, docs/configuration.md
// from the same JSON Schema and config/gateway.yaml, docs/openapi.json from the services' OpenAPI
// fragments); with --check, fails when any is out of date.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { z } from 'zod';
import { configSchema } from '../src/config/schema.js';
import { servicesOpenApi } from '../src/services/registry.js';
import { configFields, renderConfigDocs, type JsonSchema } from './config-docs.js';

const path = (name: string) => fileURLToPath(new URL(`../${name}`, import.meta.url));

const configJson = z.toJSONSchema(configSchema, {
  io: 'input',
  unrepresentable: 'any',
  // zod drops a .default() whose schema transforms (durations, sizes, lists) from the input schema;
  // the parsed value is a valid input too, so it is restored. (.prefault('50ms') keeps its own.)
  override: ({ zodSchema, jsonSchema }) => {
    const def = zodSchema._zod.def;
    if (def.type === 'default' && jsonSchema.default === undefined) {
      jsonSchema.default = JSON.parse(JSON.stringify(def.defaultValue)) as unknown;
    }
  },
});
const configDocs = renderConfigDocs({
  schema: configJson as JsonSchema,
  defaultConfig: {
    name: 'config/gateway.yaml',
    link: '../config/gateway.yaml',
    text: readFileSync(path('config/gateway.yaml'), 'utf8'),
  },
  intro: readFileSync(path('scripts/docs/configuration-intro.md'), 'utf8'),
});
for (const field of configFields(configJson as JsonSchema)) {
  if (!field.schema.description) console.warn(`warning: config field ${field.path} has no description`);
}

/** Markdown goes through prettier, so the checked-in file is the formatted one. */
async function formatted(name: string, text: string): Promise<string> {
  const options = (await prettier.resolveConfig(path(name))) ?? {};
  return prettier.format(text, { ...options, filepath: path(name) });
}

const outputs: [string, string][] = [
  ['config/schema.json', json({ title: 'tollgate gateway configuration', ...configJson })],
  ['docs/configuration.md', await formatted('docs/configuration.md', configDocs)],
  ['docs/openapi.json', json(servicesOpenApi())],
];

function json(document: object): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

const check = process.argv.includes('--check');
let stale = false;
for (const [name, text] of outputs) {
  const file = path(name);
  if (!check) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    console.log(`wrote ${name}`);
    continue;
  }
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    // missing counts as out of date
  }
  if (current !== text) {
    console.error(`${name} is out of date: run \`npm run schema\``);
    stale = true;
  } else console.log(`${name} is up to date`);
}
if (stale) process.exit(1);
