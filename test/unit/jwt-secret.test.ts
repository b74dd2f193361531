import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readOrCreateSecret } from '../../src/credentials/secret-file.js';
import { newDataDir } from '../helpers/embedded.js';

/** readOrCreateSecret in its own process (as each gateway worker is); resolves with what it returned. */
async function inProcess(file: string): Promise<string> {
  const script = `import { readOrCreateSecret } from './src/credentials/secret-file.ts';
process.stdout.write(await readOrCreateSecret(${JSON.stringify(file)}));`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  expect(code).toBe(0);
  return out;
}

describe('the generated JWT secret file', () => {
  test('is created once and read back after', async () => {
    const file = join(newDataDir(), 'sub', 'widget-jwt.secret');
    const first = await readOrCreateSecret(file);
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await readOrCreateSecret(file)).toBe(first);
    expect(readdirSync(join(file, '..'))).toEqual(['widget-jwt.secret']); // no temp file left behind
  });

  test('processes starting together all get the same, non-empty secret', { timeout: 60_000 }, async () => {
    for (let round = 0; round < 3; round++) {
      const file = join(newDataDir(), 'widget-jwt.secret');
      const secrets = await Promise.all([1, 2, 3, 4].map(() => inProcess(file)));
      expect(secrets[0]).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(new Set(secrets).size).toBe(1);
    }
  });

  test('an empty file is an error, not an empty key', async () => {
    const file = join(newDataDir(), 'widget-jwt.secret');
    writeFileSync(file, '\n');
    await expect(readOrCreateSecret(file)).rejects.toThrow(
      `the JWT secret file ${file} is empty: delete it to have a new secret made`,
    );
  });
});
