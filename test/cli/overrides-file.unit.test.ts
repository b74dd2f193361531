// The overrides file as `tollgate explain` and `tollgate replay` read it (one function): its entries
// in canonical form, or a usage error naming the file and each bad entry.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { readOverridesFile } from '../../src/cli/overrides-file.js';
import { parseOverrides } from '../../src/limits/overrides.js';
import { UsageError } from '../../src/cli/usage-error.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tollgate-overrides-file-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

test("a file's entries, at the top or under overrides:", async () => {
  const top = join(dir, 'top.yaml');
  await writeFile(top, 'ip:198.51.100.0/24: pro\n');
  const nested = join(dir, 'nested.yaml');
  await writeFile(nested, 'overrides:\n  ip:198.51.100.0/24: pro\n');
  const expected = parseOverrides({ 'ip:198.51.100.0/24': 'pro' });
  expect(expected.errors).toEqual([]);
  expect(await readOverridesFile(top)).toEqual(expected.entries);
  expect(await readOverridesFile(nested)).toEqual(expected.entries);
});

test('a bad entry is a usage error naming the file and the entry', async () => {
  const bad = join(dir, 'bad.yaml');
  await writeFile(bad, 'ip:198.51.100.0/24: pro\nnot-a-kind:x: pro\n');
  const { errors } = parseOverrides({ 'not-a-kind:x': 'pro' });
  expect(errors).toHaveLength(1);
  const err: unknown = await readOverridesFile(bad).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(UsageError);
  expect((err as UsageError).message).toBe(`${bad}: ${errors[0]}`);
});
