// Issue 22: `tollgate explain` on the shipped config prints the refusal the gateway gives (not
// "forwarded as"), and what live state may still refuse.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';

const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-explain-refusals-'));

async function explain(...args: string[]): Promise<string> {
  const run = await runCli(['explain', '--config', 'config/gateway.yaml', ...args], {
    env: { DATA_DIR: dataDir, MAX_BODY_SIZE: '1kb', MAX_IN_FLIGHT_PER_IP: '12' },
  });
  expect(run.code, run.stderr).toBe(0);
  return run.stdout;
}

test('a widget message without a visitor token: the 401 missing_token, not "forwarded as"', async () => {
  const out = await explain('POST', '/api/v1/widget/messages');
  expect(out).toContain('refused: 401 missing_token (Visitor token missing.), after counting');
  expect(out).not.toContain('forwarded as');
});

test('a bad visitor token: the 401 invalid_token', async () => {
  const out = await explain('POST', '/api/v1/widget/messages', '--header', 'Authorization: Bearer not.a.jwt');
  expect(out).toContain('refused: 401 invalid_token (Visitor token is invalid.), after counting');
});

test('a Connection header naming the credential header: the 400, before the 401', async () => {
  const out = await explain('POST', '/api/v1/widget/messages', '--header', 'Connection: Authorization');
  expect(out).toContain(
    'refused: 400 invalid_connection_header (The Connection header may not name authorization: the gateway identifies requests by it.), after counting',
  );
});

test("a declared body over the route's bound: the 413", async () => {
  const out = await explain('POST', '/api/v1/widget/satisfaction', '--header', 'Content-Length: 5000');
  expect(out).toContain(
    'refused: 413 payload_too_large (The request body exceeds 1024 bytes.), after counting',
  );
});

test('a request that passes: forwarded, and the refusals that depend on live state', async () => {
  const out = await explain('POST', '/api/v1/widget/satisfaction', '--header', 'Content-Length: 100');
  expect(out).toContain(
    [
      'forwarded as: /api/v1/widget/satisfaction',
      'may be refused: 429 rate_limited when a window below is spent (live state: the counts in the store)',
      'may be refused: 429 too_many_requests_in_flight when this address has 12 requests in progress (live state, per process)',
    ].join('\n'),
  );
});
