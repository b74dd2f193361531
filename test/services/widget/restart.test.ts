// Widget data and tokens survive a restart on the same DATA_DIR (no WIDGET_JWT_SECRET set).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Gateway } from '../../../src/runtime/gateway.js';
import { DEFAULT_CONFIG } from '../../helpers/default-config.js';
import {
  dataDirWithWorkspaces,
  embeddedEnv,
  newDataDir,
  startEmbeddedGateway,
} from '../../helpers/embedded.js';
import { send, startGateway } from '../../helpers/gateway.js';
import { RedisServer } from '../../helpers/redis-server.js';

let redis: RedisServer;
let dataDir: string;
let gateway: Gateway | undefined;

beforeAll(async () => {
  redis = await RedisServer.start();
  dataDir = dataDirWithWorkspaces('acme');
});
afterAll(async () => {
  await gateway?.close();
  await redis?.kill();
});

const post = (path: string, token: string | undefined, body: unknown) =>
  send(`${gateway!.url()}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });

test('a token issued before a restart still works, and the conversation is still there', async () => {
  gateway = await startEmbeddedGateway(dataDir, { REDIS_URL: redis.url });
  const started = await post('/api/v1/widget/init', undefined, { workspace: 'acme' });
  const { token, session_id } = started.json() as { token: string; session_id: string };
  const sent = await post('/api/v1/widget/messages', token, { body: 'Remember me' });
  expect(sent.status).toBe(201);
  await post('/api/v1/widget/satisfaction', token, { rating: 4 });
  const secret = readFileSync(join(dataDir, 'widget-jwt.secret'), 'utf8');
  await gateway.close();

  gateway = await startEmbeddedGateway(dataDir, { REDIS_URL: redis.url });
  expect(readFileSync(join(dataDir, 'widget-jwt.secret'), 'utf8')).toBe(secret);
  const listed = await post('/api/v1/widget/conversation/messages', token, {});
  expect(listed.status).toBe(200);
  expect(listed.json()).toEqual({
    messages: [(sent.json() as { message: unknown }).message],
    page: 1,
    per_page: 50,
    total: 1,
  });
  const resumed = await post('/api/v1/widget/init', token, { workspace: 'acme' });
  expect(resumed.json()).toMatchObject({
    session_id,
    resumed: true,
    conversation: { messages: 1, human_requested: false },
  });
});

test('with WIDGET_JWT_SECRET set, that secret signs and the file’s tokens are refused', async () => {
  await gateway?.close();
  const secret = 'an-operator-chosen-secret-of-enough-length';
  gateway = await startEmbeddedGateway(dataDir, { REDIS_URL: redis.url, WIDGET_JWT_SECRET: secret });
  const started = await post('/api/v1/widget/init', undefined, { workspace: 'acme' });
  const { token } = started.json() as { token: string };
  expect((await post('/api/v1/widget/messages', token, { body: 'hi' })).status).toBe(201);
  await gateway.close();

  // Back to the generated secret: the token signed with WIDGET_JWT_SECRET is now invalid.
  gateway = await startEmbeddedGateway(dataDir, { REDIS_URL: redis.url });
  const refused = await post('/api/v1/widget/messages', token, { body: 'hi' });
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
