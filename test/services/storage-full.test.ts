// A full disk, for real: SQLite's max_page_count bounds the database file, and a write past it fails
// with SQLITE_FULL exactly as on a full file system. Each service answers in its own shape, and what
// was stored before stays whole.
import { pino } from 'pino';
import { test as base, describe, expect } from 'vitest';
import { servicesConfigFrom } from '../../src/cli/services-config.js';
import { loadConfigText } from '../../src/rules/load.js';
import type { Db } from '../../src/db/database.js';
import { createUser } from '../../src/services/accounts/accounts.js';
import { listen } from '../../src/services/kit/app.js';
import type { ServiceName } from '../../src/service-names.js';
import { buildService, openServiceDatabase } from '../../src/services/registry.js';
import { ensureWorkspace } from '../../src/services/accounts/workspaces.js';
import { DEFAULT_CONFIG } from '../helpers/default-config.js';
import { embeddedEnv, newDataDir } from '../helpers/embedded.js';
import { send, type Reply } from '../helpers/gateway.js';

const STORAGE_FULL = 'The server is out of storage space. Please try again later.';
/** A service of its own on its own database, listening; the log's error lines kept. */
async function service(closers: (() => Promise<void>)[], name: ServiceName, seed: (db: Db) => void) {
  const dataDir = newDataDir();
  const config = servicesConfigFrom(
    loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', embeddedEnv(dataDir)).config,
  );
  const logged: { msg: string }[] = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => logged.push(JSON.parse(line)) });
  const db = openServiceDatabase(config, logger);
  seed(db);
  const app = await buildService(name, { db, config, logger });
  const url = await listen(app, '127.0.0.1', 0);
  closers.push(async () => {
    await app.close();
    db.close();
  });
  /** From now on the file may grow by `pages` pages only. */
  const fill = (pages: number) => {
    const count = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${count + pages}`);
  };
  const post = (path: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> =>
    send(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  return { db, fill, post, logged };
}

/** `service(name, seed)`: a service as above; those of a test are closed after it. */
const test = base.extend('service', ({}, { onCleanup }) => {
  const closers: (() => Promise<void>)[] = [];
  onCleanup(async () => {
    for (const close of closers) await close();
  });
  return (name: ServiceName, seed: (db: Db) => void) => service(closers, name, seed);
});

/** Posts until the first answer that is not `ok`; returns how many were `ok`, and that answer. */
async function untilRefused(
  post: () => Promise<Reply>,
  ok: number,
): Promise<{ stored: number; refused: Reply }> {
  for (let stored = 0; stored < 10_000; stored++) {
    const reply = await post();
    if (reply.status !== ok) return { stored, refused: reply };
  }
  throw new Error('never refused');
}

describe('the database is full', () => {
  test('the widget answers 507 in its shape; the stored messages stay, and writes resume with room', async ({
    service,
  }) => {
    const s = await service('widget', (db) => ensureWorkspace(db, 'acme'));
    const init = await s.post('/api/v1/widget/init', { workspace: 'acme' });
    const { token } = init.json() as { token: string };
    const auth = { authorization: `Bearer ${token}` };
    s.fill(20);
    const body = 'x'.repeat(3000);
    const { stored, refused } = await untilRefused(
      () => s.post('/api/v1/widget/messages', { body }, auth),
      201,
    );
    expect(stored).toBeGreaterThan(0);
    expect(refused.status).toBe(507);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(refused.text).toBe(JSON.stringify({ error: { code: 'storage_full', message: STORAGE_FULL } }));
    expect(s.logged.map((l) => l.msg)).toContain('database full: write refused');
    // Every message answered 201 is there, whole; the file is sound.
    const rows = s.db.prepare('SELECT body FROM widget_messages').pluck().all() as string[];
    expect(rows).toEqual(Array(stored).fill(body));
    expect(s.db.pragma('integrity_check', { simple: true })).toBe('ok');
    // Room again (an operator freed space): the next write is stored.
    s.fill(1000);
    expect((await s.post('/api/v1/widget/messages', { body }, auth)).status).toBe(201);
  });

  test('the collector answers 507 in the websites shape; the counts stored stay', async ({ service }) => {
    let siteUrl = '';
    const s = await service('websites', (db) => {
      const { userId } = createUser(db, 'alice');
      siteUrl = 'full.example';
      db.prepare("INSERT INTO websites (user_id, url, created_at, updated_at) VALUES (?, ?, '', '')").run(
        userId,
        siteUrl,
      );
    });
    s.fill(5);
    let n = 0;
    const visit = () =>
      s.post(
        '/api/event',
        { page: `https://${siteUrl}/${'p'.repeat(200)}/${++n}`, referrer: `https://r${n}.example/` },
        { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0' },
      );
    const { stored, refused } = await untilRefused(visit, 200);
    expect(stored).toBeGreaterThan(0);
    expect(refused.status).toBe(507);
    expect(refused.text).toBe(JSON.stringify({ message: STORAGE_FULL, status: 507 }));
    // One pageview per recorded visit, none of the refused one.
    const pageviews = s.db.prepare("SELECT sum(count) FROM stats WHERE name = 'pages'").pluck().get();
    expect(pageviews).toBe(stored);
    expect(s.db.pragma('integrity_check', { simple: true })).toBe('ok');
  });
});
