// A statistics-page session ends when its API key is rotated: signed in at /_/login with a key,
// the owner's cookie opens the private page until `tollgate users rotate-key` replaces the key,
// then not at once (through a running `tollgate start`, no restart, no expiry to wait for).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { runCli, startGatewayProcess } from '../../helpers/cli.js';
import { firstStartEnv, newDataDir } from '../../helpers/embedded.js';
import { send, type Reply } from '../../helpers/gateway.js';

const CONFIG = 'config/gateway.yaml';
const SITE = 'private.example';

test(
  'rotate-key ends the page sessions signed in with the old key',
  { timeout: 120_000 },
  async ({ onTestFinished }) => {
    const dataDir = newDataDir();
    const gp = await startGatewayProcess(CONFIG, { env: firstStartEnv(dataDir), timeoutMs: 60_000 });
    onTestFinished(() => gp.stop().then(() => undefined));
    const oldKey = readFileSync(join(dataDir, 'first-start.txt'), 'utf8').trimEnd();
    const origin = `http://${new URL(gp.url).host}`;

    const created = await send(`${gp.url}/api/v1/websites`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${oldKey}`,
        accept: 'application/json',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ url: SITE, privacy: '1' }).toString(),
    });
    expect(created.status).toBe(201);

    const signIn = (key: string): Promise<Reply> =>
      send(`${gp.url}/_/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
        body: new URLSearchParams({ key, next: `/${SITE}` }).toString(),
      });
    const page = (cookie: string) => send(`${gp.url}/${SITE}`, { headers: { cookie } });
    const cookieOf = (reply: Reply) => reply.headers['set-cookie']!.split(';')[0]!;

    const signedIn = await signIn(oldKey);
    expect(signedIn.status).toBe(303);
    const oldCookie = cookieOf(signedIn);
    expect((await page(oldCookie)).status).toBe(200);

    const rotated = await runCli(['users', 'rotate-key', '1', '--config', CONFIG], {
      env: firstStartEnv(dataDir, { LOG_LEVEL: 'silent' }),
    });
    expect(rotated.code).toBe(0);
    const newKey = /\n(tg_[A-Za-z0-9_-]{32})\n$/.exec(rotated.stdout)![1]!;

    // The old session opens the private page no more (404, as for anyone not signed in), and the
    // sign-in page asks again rather than sending it on.
    const after = await page(oldCookie);
    expect(after.status).toBe(404);
    expect((await page('')).status).toBe(404);
    const login = await send(`${gp.url}/_/login?next=%2F${SITE}`, { headers: { cookie: oldCookie } });
    expect(login.status).toBe(200);

    // The old key signs in no more; the new one does, and its session opens the page.
    expect((await signIn(oldKey)).status).toBe(401);
    const again = await signIn(newKey);
    expect(again.status).toBe(303);
    expect((await page(cookieOf(again))).status).toBe(200);
  },
);
