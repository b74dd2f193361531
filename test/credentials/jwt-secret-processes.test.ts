import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { newDataDir } from '../helpers/embedded.js';

/** The compiled module (built by the global setup), so a process starts without compiling anything. */
const SECRET_FILE = new URL('../../dist/credentials/secret-file.js', import.meta.url).href;

/** readOrCreateSecret in its own process (as each gateway worker is); resolves with what it returned. */
async function inProcess(file: string): Promise<string> {
  const script = `import { readOrCreateSecret } from ${JSON.stringify(SECRET_FILE)};
process.stdout.write(await readOrCreateSecret(${JSON.stringify(file)}));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  expect(code).toBe(0);
  return out;
}

describe('the generated JWT secret file', () => {
  test('processes starting together all get the same, non-empty secret', { timeout: 60_000 }, async () => {
    for (let round = 0; round < 3; round++) {
      const file = join(newDataDir(), 'widget-jwt.secret');
      const secrets = await Promise.all([1, 2, 3, 4].map(() => inProcess(file)));
      expect(secrets[0]).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(new Set(secrets).size).toBe(1);
    }
  });
});
