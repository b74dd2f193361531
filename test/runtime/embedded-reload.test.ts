// A reload cannot make the gateway and its embedded widget disagree about visitor tokens.
import { expect } from 'vitest';
import { loadConfigText } from '../../src/rules/load.js';
import type { Gateway } from '../../src/runtime/gateway.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { DEFAULT_CONFIG } from '../helpers/default-config.js';
import { dataDirWithWorkspaces, embeddedEnv } from '../helpers/embedded.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { send } from '../helpers/gateway.js';

const { logger, lines: warnings } = capturingLogger('warn');

/** The shipped config with its embedded services, workspace acme, its warnings captured. */
const test = serversTest
  .extend('env', { scope: 'file' }, () =>
    embeddedEnv(dataDirWithWorkspaces('acme'), {
      WIDGET_JWT_SECRET: 'first-secret-first-secret-first!!',
      LOG_LEVEL: 'warn',
    }),
  )
  .extend('gateway', { scope: 'file' }, ({ env, gateways }) =>
    gateways.start(DEFAULT_CONFIG, env, { logger }),
  );

async function init(gateway: Gateway): Promise<string> {
  const reply = await send(`${gateway.url()}/api/v1/widget/init`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"workspace":"acme"}',
  });
  expect(reply.status).toBe(200);
  return (reply.json() as { token: string }).token;
}

const message = (gateway: Gateway, token: string) =>
  send(`${gateway.url()}/api/v1/widget/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: '{"body":"hello"}',
  });

test('identity.jwt changes only on restart: tokens issued before and after a reload both verify', async ({
  env,
  gateway,
}) => {
  const before = await init(gateway);
  await gateway.reload(
    loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', {
      ...env,
      WIDGET_JWT_SECRET: 'second-secret-second-secret-2!!',
    }),
  );
  expect(
    warnings
      .filter((w) => w['msg'] === 'config reloaded, but this field changes only on restart')
      .map((w) => w['field']),
  ).toEqual(['identity.jwt']);
  const after = await init(gateway);
  expect((await message(gateway, before)).status).toBe(201);
  expect((await message(gateway, after)).status).toBe(201);
});
