// `tollgate explain` shows how the gateway treats the original clients' paths and the odd targets.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';

const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-explain-'));

async function explain(...args: string[]): Promise<string> {
  const run = await runCli(['explain', '--config', 'config/gateway.yaml', ...args], {
    env: { DATA_DIR: dataDir },
  });
  expect(run.code, run.stderr).toBe(0);
  return run.stdout;
}

test.each([
  [['POST', '/api/v1/wp/handshake'], 'route: wp-plugin -> upstream bulksync', 'limiter wp-plugin:'],
  [['POST', '/v1/wp/posts/sync'], 'route: wp-plugin -> upstream bulksync', 'limiter wp-plugin:'],
  [
    ['GET', '/api/v1/widget/conversation/messages'],
    'route: widget-session-poll -> upstream widget',
    'limiter widget-session:',
  ],
  [['PUT', '/api/v1/widget/nothing-here'], 'route: widget-other -> upstream widget', 'limiter widget-other:'],
  [
    ['POST', '/api/v1/widget/satisfaction#x'],
    'route: widget-satisfaction -> upstream widget\nforwarded as: /api/v1/widget/satisfaction',
    'limiter widget-satisfaction:',
  ],
  [
    ['POST', '/api/v1/widget%2Fsatisfaction'],
    'refused: 400 invalid_request_target (Invalid request target: the path has an encoded "/" or "\\".), after counting',
    'limiter widget-satisfaction:',
  ],
  [
    ['GET', 'http://analyzer.localhost./api/v1/reports'],
    'route: reports -> upstream reports',
    'limiters: (none',
  ],
])('explain %j', async (args, route, limiter) => {
  const out = await explain(...args);
  expect(out).toContain(route);
  expect(out).toContain(limiter);
});
