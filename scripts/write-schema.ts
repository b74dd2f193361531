// Writes config/schema.json from the zod schema; with --check, fails when the file is out of date.
import { readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { configSchema } from '../src/config/schema.js';

const file = new URL('../config/schema.json', import.meta.url);
const schema = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' });
const text = `${JSON.stringify({ title: 'tollgate gateway configuration', ...schema }, null, 2)}\n`;

if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    // missing counts as out of date
  }
  if (current !== text) {
    console.error('config/schema.json is out of date: run `npm run schema`');
    process.exit(1);
  }
  console.log('config/schema.json is up to date');
} else {
  writeFileSync(file, text);
  console.log('wrote config/schema.json');
}
