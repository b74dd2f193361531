// A services database that cannot be opened stops `tollgate start` with one line naming the file.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { embeddedEnv, newDataDir } from '../helpers/embedded.js';

/** A data directory whose tollgate.db is 8 KB of text, not a database. */
function garbageDatabase(): { dataDir: string; file: string } {
  const dataDir = newDataDir();
  const file = join(dataDir, 'tollgate.db');
  writeFileSync(file, 'this is not a database\n'.repeat(360));
  return { dataDir, file };
}

test('start: one line naming the file, exit 1, no stack trace, no service started', async () => {
  const { dataDir, file } = garbageDatabase();
  const run = await runCli(['start', '--config', 'config/gateway.yaml'], {
    env: embeddedEnv(dataDir, { LOG_LEVEL: 'info' }),
  });
  expect(run.code).toBe(1);
  expect(run.stderr).toBe(`cannot start: cannot open the database ${file}: file is not a database\n`);
  // Nothing listened and no embedded service started: not one log line.
  expect(run.stdout).toBe('');
});

test('the commands that use the database say the same', async () => {
  const { dataDir, file } = garbageDatabase();
  const run = await runCli(['tokens', 'create', '--workspace', 'acme', '--config', 'config/gateway.yaml'], {
    env: embeddedEnv(dataDir),
  });
  expect(run.code).toBe(1);
  expect(run.stderr).toBe(`cannot start: cannot open the database ${file}: file is not a database\n`);
  expect(run.stdout).toBe('');
});
