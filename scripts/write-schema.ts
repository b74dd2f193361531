// Writes the generated documents (config/schema.json from the zod schema, docs/openapi.json from
// the services' OpenAPI fragments); with --check, fails when either is out of date.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { configSchema } from '../src/config/schema.js';
import { servicesOpenApi } from '../src/services/registry.js';

const configJson = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' });
const outputs: [string, object][] = [
  ['config/schema.json', { title: 'tollgate gateway configuration', ...configJson }],
  ['docs/openapi.json', servicesOpenApi()],
];

const check = process.argv.includes('--check');
let stale = false;
for (const [name, document] of outputs) {
  const file = fileURLToPath(new URL(`../${name}`, import.meta.url));
  const text = `${JSON.stringify(document, null, 2)}\n`;
  if (!check) {
    mkdirSync(fileURLToPath(new URL('.', `file://${file}`)), { recursive: true });
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
