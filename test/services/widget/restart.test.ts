// Widget data and tokens survive a restart on the same DATA_DIR (no WIDGET_JWT_SECRET set).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Gateway } from '../../../src/runtime/gateway.js';
import { DEFAULT_CONFIG } from '../../helpers/default-config.js';
import { embeddedEnv, newDataDir } from '../../helpers/embedded.js';
import { embeddedTest } from '../../helpers/fixtures.js';
import { send, startGateway } from '../../helpers/gateway.js';

const test = embeddedTest({ redis: true, workspaces: ['acme'] });

const post = (gateway: Gateway, path: string, token: string | undefined, body: unknown) =>
  send(`${gateway.url()}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });

test('a token issued before a restart still works, and the conversation is still there', async ({
  gateway,
  dataDir,
  launch,
}) => {
  const started = await post(gateway, '/api/v1/widget/init', undefined, { workspace: 'acme' });
  const { token, session_id } = started.json() as { token: string; session_id: string };
  const sent = await post(gateway, '/api/v1/widget/messages', token, { body: 'Remember me' });
  expect(sent.status).toBe(201);
  await post(gateway, '/api/v1/widget/satisfaction', token, { rating: 4 });
  const secret = readFileSync(join(dataDir, 'widget-jwt.secret'), 'utf8');
  await gateway.close();

  const restarted = await launch();
  expect(readFileSync(join(dataDir, 'widget-jwt.secret'), 'utf8')).toBe(secret);
  const listed = await post(restarted, '/api/v1/widget/conversation/messages', token, {});
  expect(listed.status).toBe(200);
  expect(listed.json()).toEqual({
    messages: [(sent.json() as { message: unknown }).message],
    page: 1,
    per_page: 50,
    total: 1,
  });
  const resumed = await post(restarted, '/api/v1/widget/init', token, { workspace: 'acme' });
  expect(resumed.json()).toMatchObject({
    session_id,
    resumed: true,
    conversation: { messages: 1, human_requested: false },
  });
  await restarted.close();
});

test('with WIDGET_JWT_SECRET set, that secret signs and the file’s tokens are refused', async ({
  launch,
}) => {
  const secret = 'an-operator-chosen-secret-of-enough-length';
  const signing = await launch({ WIDGET_JWT_SECRET: secret });
  const started = await post(signing, '/api/v1/widget/init', undefined, { workspace: 'acme' });
  const { token } = started.json() as { token: string };
  expect((await post(signing, '/api/v1/widget/messages', token, { body: 'hi' })).status).toBe(201);
  await signing.close();

  // Back to the generated secret: the token signed with WIDGET_JWT_SECRET is now invalid.
  const generated = await launch();
  const refused = await post(generated, '/api/v1/widget/messages', token, { body: 'hi' });
  expect(refused.status).toBe(401);
  expect(refused.json()).toEqual({ error: { code: 'invalid_token', message: 'Visitor token is invalid.' } });
});

test('a config whose first JWT algorithm is not HS* cannot issue tokens: the gateway does not start', async () => {
  const yaml = DEFAULT_CONFIG.replace('algorithms: [HS256]', 'algorithms: [RS256, HS256]');
  expect(yaml).not.toBe(DEFAULT_CONFIG);
  await expect(startGateway(yaml, embeddedEnv(newDataDir()))).rejects.toThrow(
    'the widget service signs visitor tokens with identity.jwt.algorithms[0], which must be HS256, HS384 or HS512 (got "RS256")',
  );
});
