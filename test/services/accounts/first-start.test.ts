// The quick start as a user runs it: `tollgate start` on the shipped config and an empty data
// directory, then the README's first request, with no CLI step in between.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { afterEach, describe, expect, test } from 'vitest';
import { firstStartEnv, newDataDir } from '../../helpers/embedded.js';
import { limitHeaders, send, type Reply } from '../../helpers/gateway.js';
import { startGatewayProcess, type CliProcess, type LogLine } from '../../helpers/cli.js';

const CONFIG = 'config/gateway.yaml';
const adminLine = (keyFile: string) =>
  `first start: created user "admin"; its API key is in ${keyFile} (readable by this account only): keep it and delete the file`;
const DEMO_LINE =
  'first start: created workspace "demo"; try POST /api/v1/widget/init with {"workspace":"demo"}';

const running: CliProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((gp) => gp.stop()));
});

/** `tollgate start` with the shipped config's defaults, but ephemeral ports and its own data directory. */
async function start(dataDir: string, extra: Record<string, string> = {}): Promise<CliProcess> {
  const gp = await startGatewayProcess(CONFIG, { env: firstStartEnv(dataDir, extra) });
  running.push(gp);
  return gp;
}

/** The README's first request: `curl -X POST …/api/v1/widget/init -d '{"workspace":"demo"}'`. */
const init = (gp: CliProcess, workspace = 'demo'): Promise<Reply> =>
  send(`${gp.url}/api/v1/widget/init`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'curl/8.5.0' },
    body: JSON.stringify({ workspace }),
  });

const firstStartLines = (gp: CliProcess): LogLine[] =>
  gp.logs().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('first start:'));

const UNKNOWN_WORKSPACE = {
  error: {
    code: 'validation_failed',
    message: 'The given data was invalid.',
    fields: { workspace: ['The selected workspace is invalid.'] },
  },
};

describe('a first start on an empty data directory', () => {
  test(
    'creates user "admin" and workspace "demo", logged once; the quick start request answers 200 at once',
    { timeout: 90_000 },
    async () => {
      const dataDir = newDataDir();
      const gp = await start(dataDir);

      const lines = firstStartLines(gp);
      // The key is in DATA_DIR/first-start.txt (mode 0600), never in the log.
      const keyFile = join(dataDir, 'first-start.txt');
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      const apiKey = readFileSync(keyFile, 'utf8').trimEnd();
      expect(JSON.stringify(gp.logs())).not.toContain(apiKey);
      expect(lines.map((l) => [l.level, l.msg])).toEqual([
        [40, adminLine(keyFile)],
        [40, DEMO_LINE],
      ]);
      expect(lines[0]!['user']).toBe(1);
      expect(lines[0]!['keyFile']).toBe(keyFile);
      expect(apiKey).toMatch(/^tg_[A-Za-z0-9_-]{32}$/);
      expect(lines[1]!['workspace']).toBe('demo');

      const before = Math.floor(Date.now() / 1000);
      const reply = await init(gp);
      const after = Math.ceil(Date.now() / 1000);
      expect(reply.status, reply.text).toBe(200);
      expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
      const headers = limitHeaders(reply);
      expect({ ...headers, 'x-ratelimit-reset': undefined }).toEqual({
        'x-ratelimit-limit': '1000',
        'x-ratelimit-remaining': '999',
        'x-ratelimit-reset': undefined,
      });
      const reset = Number(headers['x-ratelimit-reset']);
      expect(reset).toBeGreaterThanOrEqual(before + 60);
      expect(reset).toBeLessThanOrEqual(after + 60);

      const body = reply.json() as Record<string, unknown>;
      const claims = decodeJwt(body['token'] as string);
      expect(body).toEqual({
        token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
        token_type: 'Bearer',
        session_id: claims['sid'],
        expires_at: new Date(claims.exp! * 1000).toISOString(),
        resumed: false,
        workspace: { name: 'demo' },
        website_id: null,
        conversation: { messages: 0, human_requested: false },
      });
      expect(claims.exp! - claims.iat!).toBe(86_400);
      expect([claims.iss, claims.aud]).toEqual(['tollgate', 'tollgate-widget']);

      // The visitor token it issued works for the rest of the widget, and the admin key for the APIs.
      const message = await send(`${gp.url}/api/v1/widget/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${String(body['token'])}` },
        body: '{"body":"hello"}',
      });
      expect(message.status, message.text).toBe(201);
      expect(limitHeaders(message)['x-ratelimit-remaining']).toBe('299');
      const websites = await send(`${gp.url}/api/v1/websites`, {
        headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json' },
      });
      expect(websites.status, websites.text).toBe(200);
      expect((websites.json() as { data: unknown[] }).data).toEqual([]);

      // Only "demo" was created: any other workspace is still refused.
      const other = await init(gp, 'acme');
      expect(other.status).toBe(422);
      expect(other.json()).toEqual(UNKNOWN_WORKSPACE);
      expect(limitHeaders(other)['x-ratelimit-remaining']).toBe('998');

      // A restart finds the user: nothing is created or logged again, and "demo" still answers.
      expect(await gp.stop()).toBe(0);
      const again = await start(dataDir);
      expect(firstStartLines(again)).toEqual([]);
      const resumed = await init(again);
      expect(resumed.status, resumed.text).toBe(200);
      expect((resumed.json() as { workspace: unknown }).workspace).toEqual({ name: 'demo' });
    },
  );

  test(
    'with bootstrap API keys (a provisioned deployment) creates no admin and no demo workspace',
    {
      timeout: 60_000,
    },
    async () => {
      const gp = await start(newDataDir(), { BOOTSTRAP_API_KEYS: 'tg_provisioned_key_0123456789' });
      expect(firstStartLines(gp)).toEqual([]);
      const reply = await init(gp);
      expect(reply.status).toBe(422);
      expect(reply.json()).toEqual(UNKNOWN_WORKSPACE);
      expect(limitHeaders(reply)['x-ratelimit-limit']).toBe('1000');
    },
  );
});
