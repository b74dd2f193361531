import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readOrCreateSecret } from '../../src/credentials/secret-file.js';
import { newDataDir } from '../helpers/embedded.js';

// Processes racing to create the file: test/credentials/jwt-secret-processes.test.ts.
describe('the generated JWT secret file', () => {
  test('is created once and read back after', async () => {
    const file = join(newDataDir(), 'sub', 'widget-jwt.secret');
    const first = await readOrCreateSecret(file);
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await readOrCreateSecret(file)).toBe(first);
    expect(readdirSync(join(file, '..'))).toEqual(['widget-jwt.secret']); // no temp file left behind
  });

  test('an empty file is an error, not an empty key', async () => {
    const file = join(newDataDir(), 'widget-jwt.secret');
    writeFileSync(file, '\n');
    await expect(readOrCreateSecret(file)).rejects.toThrow(
      `the JWT secret file ${file} is empty: delete it to have a new secret made`,
    );
  });
});
