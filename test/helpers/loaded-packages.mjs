// Preloaded into a tollgate process (NODE_OPTIONS=--import=<this file>): when the process exits, it
// prints the npm packages it loaded through the CommonJS loader, which holds fastify, better-sqlite3
// and piscina (all CommonJS, even when imported from ES modules).
import { createRequire } from 'node:module';
import process from 'node:process';

const require = createRequire(import.meta.url);

process.on('exit', () => {
  const packages = new Set();
  for (const file of Object.keys(require.cache)) {
    const name = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1];
    if (name) packages.add(name);
  }
  process.stderr.write(`loaded packages: ${JSON.stringify([...packages].sort())}\n`);
});
