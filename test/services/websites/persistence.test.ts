import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, test } from 'vitest';
import { DATABASE_FILE } from '../../../src/db/database.js';
import { MIGRATIONS } from '../../../src/db/migrations/index.js';
import { ALICE_KEY, BOB_KEY, embeddedEnv, newDataDir } from '../../helpers/embedded.js';
import { send, type Reply } from '../../helpers/gateway.js';
import { startGatewayProcess, type CliProcess } from '../../helpers/cli.js';

/**
 * The websites survive the process: a graceful restart, and a kill -9 right after the API
 * acknowledged a change. `tollgate start` runs as a real process on the shipped config.
 */

const CONFIG = 'config/gateway.yaml';

interface Website {
  id: number;
  url: string;
}

const running: CliProcess[] = [];

async function start(dataDir: string): Promise<CliProcess> {
  const gp = await startGatewayProcess(CONFIG, { env: embeddedEnv(dataDir, { LOG_LEVEL: 'info' }) });
  running.push(gp);
  return gp;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((gp) => gp.stop()));
});

function call(gp: CliProcess, method: string, path: string, form?: Record<string, string>, key = ALICE_KEY) {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'application/json' };
  if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
  return send(`${gp.url}${path}`, {
    method,
    headers,
    body: form && new URLSearchParams(form).toString(),
  });
}

const data = <T>(reply: Reply): T => (reply.json() as { data: T }).data;

async function create(gp: CliProcess, form: Record<string, string>, key = ALICE_KEY): Promise<Website> {
  const reply = await call(gp, 'POST', '/api/v1/websites', form, key);
  expect(reply.status, reply.text).toBe(201);
  return data<Website>(reply);
}

test(
  'websites survive a graceful restart and a kill -9, in a WAL database',
  { timeout: 90_000 },
  async () => {
    const dataDir = newDataDir();

    // First life: three websites (one with a password), one of them Bob's.
    const first = await start(dataDir);
    const created = [
      await create(first, { url: 'https://www.first.example', privacy: '2', password: 'pw', email: '1' }),
      await create(first, { url: 'second.example', exclude_ips: '192.0.2.0/24', exclude_params: 'ref' }),
    ];
    const bobs = await create(first, { url: 'bob.example' }, BOB_KEY);
    expect(await first.stop()).toBe(0);

    // Second life: everything is there, for its owner only.
    const second = await start(dataDir);
    const listed = await call(second, 'GET', '/api/v1/websites');
    expect(listed.status).toBe(200);
    expect(data<Website[]>(listed)).toEqual([created[0], created[1]]);
    expect(data<Website[]>(await call(second, 'GET', '/api/v1/websites', undefined, BOB_KEY))).toEqual([
      bobs,
    ]);

    // Acknowledged changes, then kill -9 with no chance to flush or close anything.
    const third = await create(second, { url: 'third.example', privacy: '0' });
    const updated = await call(second, 'PATCH', `/api/v1/websites/${created[1]!.id}`, { email: '1' });
    expect(updated.status).toBe(200);
    const deleted = await call(second, 'DELETE', `/websites/${created[0]!.id}/destroy`);
    expect(deleted.status).toBe(200);
    second.signal('SIGKILL');
    expect(await second.exit).toEqual({ code: null, signal: 'SIGKILL' });

    // Third life: the acknowledged state, exactly.
    const revived = await start(dataDir);
    const after = await call(revived, 'GET', '/api/v1/websites');
    expect(data<Website[]>(after)).toEqual([data<Website>(updated), third]);
    const shown = await call(revived, 'GET', `/api/v1/websites/${third.id}`);
    expect(shown.json()).toEqual({ data: third, status: 200 });
    expect((await call(revived, 'GET', `/api/v1/websites/${created[0]!.id}`)).status).toBe(404);
    // A new website after the crash takes a new id.
    const fourth = await create(revived, { url: 'fourth.example' });
    expect(fourth.id).toBeGreaterThan(third.id);

    // The file is in WAL mode, with every migration applied.
    const db = new Database(join(dataDir, DATABASE_FILE), { readonly: true, fileMustExist: true });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.at(-1)!.version);
      expect(db.prepare('SELECT url FROM websites ORDER BY id').pluck().all()).toEqual([
        'second.example',
        'bob.example',
        'third.example',
        'fourth.example',
      ]);
    } finally {
      db.close();
    }
  },
);
