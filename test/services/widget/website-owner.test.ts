// Widget init attributes a session only to a website of the workspace's owner. Probed as an
// attacker would: another owner's id, a deleted id and a never-used id must be indistinguishable,
// through the gateway and straight at the widget service, on a real SQLite file.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect } from 'vitest';
import { servicesConfigFrom } from '../../../src/cli/services-config.js';
import { loadConfigText } from '../../../src/rules/load.js';
import { DATABASE_FILE } from '../../../src/db/database.js';
import type { Gateway } from '../../../src/runtime/gateway.js';
import { userForKey } from '../../../src/services/accounts/accounts.js';
import { openServiceDatabase, startService, type RunningService } from '../../../src/services/registry.js';
import { createWorkspaceToken } from '../../../src/services/accounts/workspaces.js';
import { DEFAULT_CONFIG } from '../../helpers/default-config.js';
import { ALICE_KEY, BOB_KEY, embeddedEnv } from '../../helpers/embedded.js';
import { embeddedTest } from '../../helpers/fixtures.js';
import { send, silentLogger, type Reply } from '../../helpers/gateway.js';

/** The one 422 a website_id that is not the owner's gets, whatever the reason. */
const NOT_YOURS =
  '{"error":{"code":"validation_failed","message":"The given data was invalid.",' +
  '"fields":{"website_id":["The selected website_id is invalid."]}}}';

const init = (base: string, body: object, headers: Record<string, string> = {}): Promise<Reply> =>
  send(`${base}/api/v1/widget/init`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

const test = embeddedTest()
  // Each owner's workspace and websites, and a deleted website, made through the gateway.
  .extend('sites', { scope: 'file' }, async ({ gateway, db }) => {
    async function website(key: string, url: string): Promise<number> {
      const reply = await send(`${gateway.url()}/api/v1/websites`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
      });
      expect(reply.status).toBe(201);
      return (reply.json() as { data: { id: number } }).data.id;
    }
    createWorkspaceToken(db, 'alice-shop', userForKey(db, ALICE_KEY)!);
    createWorkspaceToken(db, 'bob-shop', userForKey(db, BOB_KEY)!);
    const aliceSite = await website(ALICE_KEY, 'alice.example');
    const bobSite = await website(BOB_KEY, 'bob.example');
    const deletedSite = await website(ALICE_KEY, 'gone.example');
    const deleted = await send(`${gateway.url()}/api/v1/websites/${deletedSite}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${ALICE_KEY}` },
    });
    expect(deleted.status).toBe(200);
    return { aliceSite, bobSite, deletedSite };
  })
  // The widget service alone, on the same database file.
  .extend('widgetAlone', { scope: 'file' }, async ({ dataDir }, { onCleanup }) => {
    const config = servicesConfigFrom(
      loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', embeddedEnv(dataDir)).config,
    );
    const serviceDb = openServiceDatabase(config, silentLogger);
    const widgetAlone = await startService(
      'widget',
      { db: serviceDb, config, logger: silentLogger },
      '127.0.0.1',
      0,
    );
    onCleanup(async () => {
      await widgetAlone.close();
      serviceDb.close();
    });
    return widgetAlone;
  });

type Where = (fixtures: { gateway: Gateway; widgetAlone: RunningService }) => string;

describe.each<[string, Where]>([
  ['through the gateway', ({ gateway }) => gateway.url()],
  ['at the widget service alone', ({ widgetAlone }) => widgetAlone.url],
])('widget init, %s', (_where, where) => {
  test("the owner's own website: the session is attributed to it", async ({
    gateway,
    widgetAlone,
    sites: { aliceSite, bobSite },
  }) => {
    const base = () => where({ gateway, widgetAlone });
    for (const [workspace, site] of [
      ['alice-shop', aliceSite],
      ['bob-shop', bobSite],
    ] as const) {
      const reply = await init(base(), { workspace, website_id: site });
      expect(reply.status, reply.text).toBe(200);
      expect(reply.json()).toMatchObject({
        workspace: { name: workspace },
        website_id: site,
        resumed: false,
      });
    }
  });

  test("another owner's id, a deleted id and a never-used id get the same bytes", async ({
    gateway,
    widgetAlone,
    sites: { aliceSite, bobSite, deletedSite },
  }) => {
    const base = () => where({ gateway, widgetAlone });
    const probes = [bobSite, deletedSite, bobSite + 1000, Number.MAX_SAFE_INTEGER, '7x', 0];
    const replies = await Promise.all(
      probes.map((id) => init(base(), { workspace: 'alice-shop', website_id: id })),
    );
    for (const [i, reply] of replies.entries()) {
      expect({ id: probes[i], status: reply.status, body: reply.text }).toEqual({
        id: probes[i],
        status: 422,
        body: NOT_YOURS,
      });
      expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(reply.headers['content-length']).toBe(String(Buffer.byteLength(NOT_YOURS)));
    }
    // And the other way round: Alice's site is nothing to Bob's workspace.
    const reverse = await init(base(), { workspace: 'bob-shop', website_id: aliceSite });
    expect({ status: reverse.status, body: reverse.text }).toEqual({ status: 422, body: NOT_YOURS });
  });

  test('an unknown workspace: any website_id is invalid too, existing or not', async ({
    gateway,
    widgetAlone,
    sites: { aliceSite, bobSite },
  }) => {
    const base = () => where({ gateway, widgetAlone });
    const [real, missing] = await Promise.all(
      [aliceSite, bobSite + 1000].map((id) => init(base(), { workspace: 'no-such-shop', website_id: id })),
    );
    expect(real!.status).toBe(422);
    expect(real!.json()).toEqual({
      error: {
        code: 'validation_failed',
        message: 'The given data was invalid.',
        fields: {
          workspace: ['The selected workspace is invalid.'],
          website_id: ['The selected website_id is invalid.'],
        },
      },
    });
    expect(missing!.text).toBe(real!.text);
  });

  test("resuming a session with another owner's website is refused, and the session keeps its own", async ({
    gateway,
    widgetAlone,
    db,
    sites: { aliceSite, bobSite },
  }) => {
    const base = () => where({ gateway, widgetAlone });
    const first = await init(base(), { workspace: 'alice-shop', website_id: aliceSite });
    const { token, session_id } = first.json() as { token: string; session_id: string };
    const moved = await init(
      base(),
      { workspace: 'alice-shop', website_id: bobSite },
      { authorization: `Bearer ${token}` },
    );
    expect({ status: moved.status, body: moved.text }).toEqual({ status: 422, body: NOT_YOURS });
    const stored = db.prepare('SELECT website_id FROM widget_sessions WHERE id = ?').get(session_id);
    expect(stored).toEqual({ website_id: aliceSite });
  });
});

describe('the owner in the database file', () => {
  test('each workspace records its owner; the websites keep theirs', ({ dataDir, sites: _sites }) => {
    const reader = new Database(join(dataDir, DATABASE_FILE), { readonly: true });
    try {
      const owners = reader
        .prepare(
          `SELECT w.name, u.name AS owner FROM workspaces w JOIN users u ON u.id = w.user_id
           WHERE w.name LIKE '%-shop' ORDER BY w.name`,
        )
        .all();
      expect(owners).toEqual([
        { name: 'alice-shop', owner: 'bootstrap-1' },
        { name: 'bob-shop', owner: 'bootstrap-2' },
      ]);
    } finally {
      reader.close();
    }
  });
});
